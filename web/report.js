// The script of vramfit's HTML reports, embedded into each report at build time. The pictures
// need no script (hover text is SVG <title>); this only links a bar to its row of the formula
// table: hovering one highlights the other.
(function () {
  "use strict";
  function link(a, b) {
    a.addEventListener("mouseenter", function () { b.classList.add("hot"); });
    a.addEventListener("mouseleave", function () { b.classList.remove("hot"); });
  }
  document.querySelectorAll("[data-explain]").forEach(function (el) {
    var row = document.getElementById("explain-" + el.getAttribute("data-explain"));
    if (row) { link(el, row); link(row, el); }
  });
})();
