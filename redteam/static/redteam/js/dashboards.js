// Dashboards: small enhancements; the page works fully without them.
(function () {
  "use strict";
  // The print button (no inline handlers under our Content-Security-Policy).
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-print]");
    if (button) window.print();
  });
  // Closed tables would be left out of a printout (button or browser menu): open them.
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.table-details").forEach(function (d) { d.open = true; });
  });
  // Option selects next to a chart apply on change.
  document.addEventListener("change", function (event) {
    var select = event.target.closest("select[data-autosubmit]");
    if (select && select.form) select.form.requestSubmit();
  });
})();
