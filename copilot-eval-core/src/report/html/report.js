// The outcome filter and the name search of the copilot-eval HTML report (inlined into the page).
(function () {
  "use strict";
  var evals = Array.prototype.slice.call(document.querySelectorAll("details.eval"));
  var boxes = Array.prototype.slice.call(document.querySelectorAll("#filter input[type=checkbox]"));
  var search = document.getElementById("search");
  var shown = document.getElementById("shown");
  var none = document.getElementById("no-match");
  function apply() {
    var outcomes = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
    var query = search.value.trim().toLowerCase();
    var count = 0;
    evals.forEach(function (e) {
      var match = outcomes.indexOf(e.dataset.outcome) >= 0 &&
        (query === "" || e.dataset.name.toLowerCase().indexOf(query) >= 0);
      e.hidden = !match;
      if (match) { count += 1; }
    });
    shown.textContent = count + " of " + evals.length + " evals shown";
    none.hidden = count !== 0;
  }
  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  search.addEventListener("input", apply);
  // A count at the top shows only the evals of its outcome; clicking it again shows all.
  Array.prototype.forEach.call(document.querySelectorAll("button.count"), function (button) {
    button.addEventListener("click", function () {
      var only = button.dataset.only;
      var alone = boxes.every(function (b) { return b.checked === (b.value === only); });
      boxes.forEach(function (b) { b.checked = alone || b.value === only; });
      apply();
    });
  });
  // A link to an eval (#eval-N, from the chart) opens it.
  function openTarget() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target && target.tagName === "DETAILS") {
      target.hidden = false;
      target.open = true;
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  apply();
})();
