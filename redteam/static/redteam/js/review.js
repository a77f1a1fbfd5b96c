// Review pages: progressive enhancements only. Every toggle on these pages is CSS (radio
// buttons and checkboxes) and every form posts without JavaScript; this file adds the
// click-to-enlarge view for images and moves focus into forms htmx swaps in.
(function () {
  "use strict";

  var dialog = null;

  function lightbox() {
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.className = "lightbox";
    dialog.setAttribute("aria-label", "Enlarged image");
    var bar = document.createElement("div");
    bar.className = "lightbox-bar";
    var open = document.createElement("a");
    open.textContent = "Open the file";
    open.target = "_blank";
    open.rel = "noopener";
    var close = document.createElement("button");
    close.type = "button";
    close.textContent = "Close (Esc)";
    close.addEventListener("click", function () { dialog.close(); });
    bar.appendChild(open);
    bar.appendChild(close);
    var img = document.createElement("img");
    img.alt = "";
    dialog.appendChild(bar);
    dialog.appendChild(img);
    // A click on the backdrop (outside the image) closes the view.
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog) dialog.close();
    });
    document.body.appendChild(dialog);
    return dialog;
  }

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    var link = event.target.closest ? event.target.closest("a[data-enlarge]") : null;
    if (!link) return;
    var source = link.querySelector("img");
    if (!source) return;
    event.preventDefault();
    var box = lightbox();
    var img = box.querySelector("img");
    img.src = link.href;
    img.alt = source.alt;
    box.querySelector(".lightbox-bar a").href = link.href;
    box.showModal();
  });

  // A form swapped in by htmx (human score) gets the keyboard focus.
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail && event.detail.target;
    if (!target || !target.querySelector) return;
    var field = target.querySelector("form input:not([type=hidden]), form textarea");
    if (field) field.focus();
  });
})();
