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
})();
