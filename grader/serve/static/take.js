// The candidate's pages: the clock (the server's, re-read every 30 s), and on an exercise's page the editor
// (CodeMirror, vendored), saved as one types (a counter orders saves; a closing tab sends the last one),
// "Run checks" (saves, queues a run of the visible checks, shows its scorecard when it is graded).
(function () {
  "use strict";
  var controls = [];

  function disableAll() {
    controls.forEach(function (c) { c.disabled = true; });
  }

  var clock = document.getElementById("clock");
  if (clock) {
    var left = parseFloat(clock.dataset.left), since = Date.now();
    var show = function () {
      var s = Math.max(0, left - (Date.now() - since) / 1000);
      var m = Math.floor(s / 60), sec = Math.floor(s % 60);
      clock.textContent = s <= 0 ? "time is up" : m + ":" + (sec < 10 ? "0" : "") + sec + " left";
      if (s <= 0) { clock.classList.add("up"); disableAll(); }
    };
    setInterval(show, 1000);
    show();
    setInterval(function () {
      fetch(clock.dataset.url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
        .then(function (r) { return r.json(); })
        .then(function (d) {
          if (d.seconds_left !== null && d.seconds_left !== undefined) { left = d.seconds_left; since = Date.now(); }
          if (d.handed_in) { window.location.href = "/take"; }
        }).catch(function () {});
    }, 30000);
  }

  var handin = document.querySelector("form.handin");
  if (handin) {
    handin.addEventListener("submit", function (e) {
      if (!window.confirm("Hand in every answer now? This is final: nothing can be changed afterwards.")) {
        e.preventDefault();
      }
    });
  }

  var work = document.getElementById("work");
  if (!work || !window.CodeMirror) { return; }
  var editor = window.CodeMirror.fromTextArea(document.getElementById("answer"), {
    mode: "python", lineNumbers: true, indentUnit: 4, tabSize: 4, indentWithTabs: false, viewportMargin: 50,
    extraKeys: {Tab: function (cm) { cm.replaceSelection("    "); }}
  });
  var seq = parseInt(work.dataset.seq, 10) || 0, savedSeq = seq, timer = null;
  var saved = document.getElementById("saved"), runButton = document.getElementById("run");
  var runState = document.getElementById("run-state"), frame = document.getElementById("scorecard");
  controls.push(runButton);
  window.graderEditor = editor;  // for a person's console, and the browser tests

  function say(el, text, bad) { el.textContent = text; el.classList.toggle("bad", !!bad); }
  function body() { return JSON.stringify({text: editor.getValue(), seq: seq}); }
  function post(url, payload, keepalive) {
    return fetch(url, {method: "POST", credentials: "same-origin", keepalive: !!keepalive, body: payload,
      headers: {"Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": work.dataset.csrf}});
  }
  function answered(r) {
    return r.json().then(function (d) { if (!r.ok) { throw d; } return d; });
  }
  function save() {
    if (savedSeq >= seq) { return Promise.resolve(); }
    var sending = seq;
    say(saved, "saving…");
    return post(work.dataset.save, body()).then(answered).then(function () {
      savedSeq = Math.max(savedSeq, sending);
      say(saved, savedSeq >= seq ? "saved" : "unsaved");
    }).catch(function (e) {
      if (e && e.error) { say(saved, "not saved: " + e.error, true); return; }
      say(saved, "not saved: no connection (retrying)", true);
      clearTimeout(timer);
      timer = setTimeout(save, 3000);
    });
  }
  editor.on("change", function () {
    seq += 1;
    say(saved, "unsaved");
    clearTimeout(timer);
    timer = setTimeout(save, 500);
  });
  window.addEventListener("pagehide", function () { if (savedSeq < seq) { post(work.dataset.save, body(), true); } });
  document.addEventListener("visibilitychange", function () { if (document.visibilityState === "hidden") { save(); } });

  function poll(id) {
    fetch("/take/runs/" + id, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(answered).then(function (d) {
        if (d.status === "queued" || d.status === "running") {
          say(runState, d.status === "queued" ? "grading… queued, " + d.ahead + " run(s) ahead" : "grading… running the visible checks");
          setTimeout(poll, 1000, id);
          return;
        }
        runButton.disabled = false;
        if (d.scorecard) {
          say(runState, "graded: the scorecard of this run is below");
          frame.src = d.scorecard;
          frame.hidden = false;
        } else {
          say(runState, d.reason || "not graded", true);
        }
      }).catch(function (e) {
        runButton.disabled = false;
        say(runState, (e && e.error) || "could not read the run's state", true);
      });
  }
  runButton.addEventListener("click", function () {
    clearTimeout(timer);
    runButton.disabled = true;
    say(runState, "saving and queueing…");
    post(work.dataset.run, body()).then(answered).then(function (d) {
      savedSeq = Math.max(savedSeq, seq);
      say(saved, "saved");
      poll(d.run);
    }).catch(function (e) {
      runButton.disabled = false;
      say(runState, (e && e.error) || "could not run the checks: no connection", true);
    });
  });
  if (work.dataset.lastRun) { poll(work.dataset.lastRun); }
}());
