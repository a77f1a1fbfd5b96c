// The admin's theme is the user's Redline preference (Preferences page), handed over by the
// server in this script's data-theme: "auto" (follow the device), "light" or "dark". Runs in
// <head>, before the page is drawn, in place of Django's theme.js (which kept a choice of its
// own in localStorage).
(function () {
  "use strict";
  var theme = document.currentScript && document.currentScript.getAttribute("data-theme");
  if (theme !== "light" && theme !== "dark") theme = "auto";
  document.documentElement.setAttribute("data-theme", theme);
})();
