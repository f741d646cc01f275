// The panel's live table: server-sent events from /a/ID/events replace its rows (rendered, escaped, by the
// server's own template) whenever a candidate's state changes. Without scripts the page still reads, as of its load.
(function () {
  "use strict";
  var table = document.getElementById("live");
  if (!table || !window.EventSource) { return; }
  var note = document.getElementById("live-note");
  var events = new EventSource(table.dataset.events);
  events.addEventListener("state", function (e) {
    var state = JSON.parse(e.data);
    table.tBodies[0].innerHTML = state.rows_html;
    table.dataset.updates = String((parseInt(table.dataset.updates, 10) || 0) + 1);
    note.textContent = "This table updates itself as candidates work and hand in.";
  });
  events.addEventListener("error", function () {
    note.textContent = "Live updates paused (the connection dropped); reconnecting…";
  });
}());
