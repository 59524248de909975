// Glossary cards. A term in the prose is a link to its glossary entry (so it works with
// JavaScript off, where hovering or focusing it shows its card); here it becomes the button
// of a disclosure: Enter, Space, a click or a tap open its card (aria-expanded says so), and
// Escape or a click elsewhere closes it. The card is no tooltip: it holds links ("taught in",
// "in the glossary"), which Tab reaches from the term. The term is described by the
// definition alone (aria-describedby, in the page's HTML). A mouse's hover still shows the
// card for a glance. Ctrl-, Shift- or middle-click follows the link to the glossary.
(function () {
  "use strict";
  var bound = new WeakSet();
  var opened = null;  // the .term whose card is open

  function linkOf(term) { return term.querySelector(".term-link"); }
  function cardOf(term) { return term.querySelector(".term-card"); }

  // Kept on screen as a value's note is: site.js's placement, which runs before this script
  // (the pages load site.js first).
  function place(term) {
    if (window.coursebuilderPlace) window.coursebuilderPlace(term, cardOf(term));
  }

  function setOpen(term, open) {
    linkOf(term).setAttribute("aria-expanded", String(open));
    term.classList.toggle("open", open);
    term.classList.remove("dismissed");
    if (open) {
      if (opened && opened !== term) setOpen(opened, false);
      opened = term;
      place(term);
    } else if (opened === term) {
      opened = null;
    }
  }

  function bind(term) {
    var link = linkOf(term), card = cardOf(term);
    if (!link || !card || !card.id || bound.has(term)) return;
    bound.add(term);
    term.classList.add("disclosure");
    link.setAttribute("role", "button");
    link.setAttribute("aria-expanded", "false");
    link.setAttribute("aria-controls", card.id);
    link.addEventListener("click", function (event) {
      if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey || event.button) return;
      event.preventDefault();
      setOpen(term, link.getAttribute("aria-expanded") !== "true");
    });
    link.addEventListener("keydown", function (event) {  // a button's Space
      if (event.key !== " ") return;
      event.preventDefault();
      setOpen(term, link.getAttribute("aria-expanded") !== "true");
    });
    term.addEventListener("mouseenter", function () { if (opened !== term) place(term); });
    term.addEventListener("mouseleave", function () { term.classList.remove("dismissed"); });
    // Tab past the card's last link (or back before the term): the card closes behind it.
    term.addEventListener("focusout", function (event) {
      if (event.relatedTarget && !term.contains(event.relatedTarget)) setOpen(term, false);
    });
  }

  // Escape closes the open card (the focus goes back to its term if it was inside) or hides
  // the one a mouse hovers; it then does nothing else (site.js's Escape closes the menu).
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var hovered = Array.prototype.filter.call(document.querySelectorAll(".term.disclosure"),
      function (term) { return term.matches(":hover"); })[0];
    var term = opened || hovered;
    if (!term) return;
    if (opened) {
      var inside = opened.contains(document.activeElement);
      setOpen(opened, false);
      if (inside) linkOf(term).focus();
    }
    if (term.matches(":hover")) term.classList.add("dismissed");
    event.preventDefault();
  }, true);

  document.addEventListener("click", function (event) {
    if (opened && !opened.contains(event.target)) setOpen(opened, false);
  });

  function bindAll() { document.querySelectorAll(".term").forEach(bind); }
  bindAll();
  // The preview (builder/preview/live.js) swapped parts of <main>: the new terms too.
  document.addEventListener("coursebuilder:patched", bindAll);
})();
