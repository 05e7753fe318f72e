// Ebbing inspector: the only script. Erasing asks first; everything else is a plain form.
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
