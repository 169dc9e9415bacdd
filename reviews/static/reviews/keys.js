/* Keyboard review. Queue: j/k move the selection, Enter or o opens it. Proposal page: a/r/c pick
   approve / reject / request changes and focus the reason box. Anywhere: ? shows the shortcuts.
   Never while typing in a field. One listener on the document that looks the page up at each key
   press, so it keeps working after htmx swaps a fragment in. */
(function () {
  "use strict";

  var NOT_TYPING = ["radio", "checkbox", "button", "submit", "reset", "hidden"];

  function typing(target) {
    if (!target || !target.closest) return false;
    if (target.closest("textarea, select, [contenteditable]")) return true;
    return target.tagName === "INPUT" && NOT_TYPING.indexOf(target.type) < 0;
  }

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("table.queue tbody tr[data-href]"));
  }

  function selected() {
    return document.querySelector("table.queue tbody tr.kb-selected");
  }

  function select(row) {
    rows().forEach(function (other) {
      other.classList.remove("kb-selected");
      other.removeAttribute("aria-current");
    });
    row.classList.add("kb-selected");
    row.setAttribute("aria-current", "true");
    var link = row.querySelector("a.open");
    if (link) link.focus();
    row.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    var all = rows();
    if (!all.length) return false;
    var current = all.indexOf(selected());
    var next = current < 0 ? 0 : Math.min(all.length - 1, Math.max(0, current + step));
    select(all[next]);
    return true;
  }

  function open(event) {
    var row = selected();
    if (!row) return false;
    // Enter on another control (a filter button, a checkbox) keeps its own meaning.
    var active = document.activeElement;
    if (event.key === "Enter" && active && active !== document.body && !row.contains(active)) return false;
    window.location.assign(row.getAttribute("data-href"));
    return true;
  }

  function decide(value) {
    var form = document.getElementById("decision-form");
    if (!form) return false;
    var choice = form.querySelector('input[name="decision"][value="' + value + '"]');
    if (!choice) return false;
    choice.checked = true;
    var reason = form.querySelector('textarea[name="reason"]');
    if (reason) reason.focus();
    return true;
  }

  function help() {
    var dialog = document.getElementById("shortcut-help");
    if (!dialog) return false;
    if (dialog.open) dialog.close();
    else dialog.showModal();
    return true;
  }

  var KEYS = {
    j: function () { return move(1); },
    k: function () { return move(-1); },
    o: open,
    Enter: open,
    a: function () { return decide("approve"); },
    r: function () { return decide("reject"); },
    c: function () { return decide("request_changes"); },
    "?": help,
  };

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (typing(event.target)) return;
    var handler = KEYS[event.key];
    if (handler && handler(event)) event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-shortcut-help]");
    if (button) {
      event.preventDefault();
      help();
    }
  });
})();
