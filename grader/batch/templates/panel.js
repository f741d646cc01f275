/* Sortable score table, inlined into index.html. Header text is wrapped in a button here, so
   without scripts the table reads the same with nothing that pretends to be clickable. */
(function () {
  "use strict";
  var table = document.getElementById("scores");
  if (!table) return;
  var heads = table.tHead.rows[0].cells;
  function key(tr, i) { return tr.cells[i].getAttribute("data-sort") || ""; }
  function sortBy(i) {
    var th = heads[i], numeric = th.getAttribute("data-type") === "num", now = th.getAttribute("aria-sort");
    var dir = now === "descending" ? "ascending" : now === "ascending" ? "descending" : (numeric ? "descending" : "ascending");
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a, i), y = key(b, i);
      if (x === "" || y === "") { if (x !== y) return x === "" ? 1 : -1; }  /* no value: last either way */
      var d = x === y ? 0 : numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      if (dir === "descending") d = -d;
      return d || key(a, 0).localeCompare(key(b, 0));
    });
    rows.forEach(function (tr) { body.appendChild(tr); });
    for (var j = 0; j < heads.length; j++) heads[j].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", dir);
  }
  Array.prototype.forEach.call(heads, function (th, i) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    while (th.firstChild) button.appendChild(th.firstChild);
    th.appendChild(button);
    button.addEventListener("click", function () { sortBy(i); });
  });
})();
