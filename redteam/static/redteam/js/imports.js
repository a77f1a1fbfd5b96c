// Upload progress for the import form: the bytes sent so far, as a bar. Without this script
// the form posts normally; with it the same POST goes through XMLHttpRequest so the upload
// itself (which can take minutes for a large dbdata zip) shows progress.
(function () {
  "use strict";
  function megabytes(bytes) { return (bytes / 1048576).toFixed(1) + " MB"; }

  function enhance(form) {
    var box = form.querySelector(".upload-progress");
    var bar = box && box.querySelector("progress");
    var text = box && box.querySelector(".upload-progress-text");
    var button = form.querySelector("button[type=submit]");
    if (!box || !bar || !text || !button || !window.XMLHttpRequest || !window.FormData) return;

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var request = new XMLHttpRequest();
      request.open("POST", form.action);
      request.upload.addEventListener("progress", function (e) {
        if (!e.lengthComputable) return;
        bar.max = e.total;
        bar.value = e.loaded;
        text.textContent = e.loaded < e.total
          ? "Uploading " + megabytes(e.loaded) + " of " + megabytes(e.total)
          : "Checking the file…";
      });
      request.addEventListener("load", function () {
        var landed = request.responseURL && request.responseURL.split("#")[0];
        if (request.status === 200 && landed && landed !== form.action) {
          window.location.assign(landed);   // the new job's page
          return;
        }
        // The form came back with an error: show it in place of this form.
        var page = new DOMParser().parseFromString(request.responseText, "text/html");
        var fresh = page.getElementById("upload-card");
        var card = document.getElementById("upload-card");
        if (fresh && card) {
          card.replaceWith(fresh);
          var again = fresh.querySelector("form.upload-form");
          if (again) enhance(again);
          var error = fresh.querySelector(".field-error");
          if (error) error.focus();
        } else {
          box.hidden = true;
          button.disabled = false;
          text.textContent = "";
          window.alert("The upload failed (HTTP " + request.status + "). Try again.");
        }
      });
      request.addEventListener("error", function () {
        button.disabled = false;
        text.textContent = "The upload was interrupted; check the connection and try again.";
      });
      box.hidden = false;
      button.disabled = true;
      text.textContent = "Starting upload…";
      request.send(new FormData(form));
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.querySelector("form.upload-form");
    if (form) enhance(form);
  });
})();
