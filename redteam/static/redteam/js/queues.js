// Review queues: keyboard shortcuts on an attack page opened from a queue (?queue=<id>).
// j / n next, k / p previous, s / f / u choose success / failure / undetermined, r focuses the
// reason, Ctrl+Enter (or Cmd+Enter) records the verdict, after which the server sends the
// reviewer on to the next attack. Letters are ignored while typing in a field; Ctrl+Enter is
// not. Everything here is also a link or a form control, so the page works without it.
(function () {
  "use strict";

  var OUTCOMES = { s: "success", f: "failure", u: "undetermined" };

  function typing(target) {
    var tag = (target.tagName || "").toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }

  function form() {
    return document.querySelector("form[data-queue-form]");
  }

  function follow(selector) {
    var link = document.querySelector(selector);
    if (link && link.href) window.location.assign(link.href);
    return Boolean(link);
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.isComposing) return;
    var verdict = form();
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      if (!verdict) return;
      event.preventDefault();
      if (verdict.requestSubmit) verdict.requestSubmit();
      else verdict.submit();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var key = (event.key || "").toLowerCase();
    if (key === "j" || key === "n") {
      if (follow("a[data-queue-next]")) event.preventDefault();
    } else if (key === "k" || key === "p") {
      if (follow("a[data-queue-previous]")) event.preventDefault();
    } else if (OUTCOMES[key] && verdict) {
      var choice = verdict.querySelector('input[name="outcome"][value="' + OUTCOMES[key] + '"]');
      if (choice) {
        event.preventDefault();
        choice.checked = true;
        choice.dispatchEvent(new Event("change", { bubbles: true }));
      }
    } else if (key === "r" && verdict) {
      var reason = verdict.querySelector('textarea[name="reason"]');
      if (reason) {
        event.preventDefault();  // the "r" is a command, not the reason's first letter
        reason.focus();
      }
    }
  });
})();
