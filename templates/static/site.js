// Glossary cards: Escape closes an open card; a tap toggles it on touch screens.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  for (const term of document.querySelectorAll(".term")) term.classList.remove("open");
  if (document.activeElement && document.activeElement.closest(".term")) document.activeElement.blur();
});
