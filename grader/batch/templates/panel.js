/* The score table's sorting and flag filter, inlined into index.html. Header text is wrapped in a button
   here and the filter is shown here, so without scripts the table reads the same with nothing that
   pretends to be clickable. Each candidate is one <tbody>: sorting moves whole candidates. */
(function () {
  "use strict";
  var table = document.getElementById("scores");
  if (!table) return;
  var heads = table.tHead.rows[0].cells;
  function key(body, i) { return body.rows[0].cells[i].getAttribute("data-sort") || ""; }
  function sortBy(i) {
    var th = heads[i], numeric = th.getAttribute("data-type") === "num", now = th.getAttribute("aria-sort");
    var dir = now === "descending" ? "ascending" : now === "ascending" ? "descending" : (numeric ? "descending" : "ascending");
    var bodies = Array.prototype.slice.call(table.tBodies);
    bodies.sort(function (a, b) {
      var x = key(a, i), y = key(b, i);
      if (x === "" || y === "") { if (x !== y) return x === "" ? 1 : -1; }  /* no value: last either way */
      var d = x === y ? 0 : numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      if (dir === "descending") d = -d;
      return d || key(a, 0).localeCompare(key(b, 0));
    });
    bodies.forEach(function (body) { table.appendChild(body); });
    for (var j = 0; j < heads.length; j++) heads[j].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", dir);
  }
  Array.prototype.forEach.call(heads, function (th, i) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    while (th.firstChild) button.appendChild(th.firstChild);
    th.appendChild(button);
    /* On the header, not the button: a wrapped header is taller than its text, and all of it sorts
       (a key press on the focused button is a click that reaches the header too). */
    th.addEventListener("click", function () { sortBy(i); });
  });
  var select = document.getElementById("flag-filter"), count = document.getElementById("filter-count");
  if (!select) return;
  select.parentNode.hidden = false;
  function filter() {
    var want = select.value, shown = 0, bodies = table.tBodies;
    for (var b = 0; b < bodies.length; b++) {
      var flags = " " + (bodies[b].getAttribute("data-flags") || "") + " ";
      var show = !want || flags.indexOf(" " + want + " ") >= 0;
      bodies[b].hidden = !show;
      shown += show ? 1 : 0;
    }
    count.textContent = want ? shown + " of " + bodies.length + " candidates" : "";
  }
  select.addEventListener("change", filter);
  filter();
})();
