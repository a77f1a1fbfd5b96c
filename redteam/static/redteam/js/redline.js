// Small progressive enhancements shared by every page; every page works without them.
(function () {
  "use strict";
  // "/" focuses the global search box, as in most tools, unless the user is typing.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || event.target.isContentEditable) return;
    var box = document.getElementById("global-q");
    if (box) { event.preventDefault(); box.focus(); box.select(); }
  });

  // Filter panels start folded where they sit above the results (phones, and below the width
  // in px their data-collapse-narrow names), so the results are on the first screen; they
  // stay open (the no-JavaScript default) everywhere else.
  function foldOnNarrow() {
    document.querySelectorAll("details[data-collapse-narrow][open]").forEach(function (panel) {
      var width = parseInt(panel.getAttribute("data-collapse-narrow"), 10) || 800;
      if (window.matchMedia("(max-width: " + width + "px)").matches) panel.removeAttribute("open");
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", foldOnNarrow);
  } else {
    foldOnNarrow();
  }
})();
