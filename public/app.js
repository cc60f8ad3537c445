// Leadbook's only script of its own. Everything works without it; it adds
// local times, copy/download of recovery codes, an avatar preview, upload
// progress, and Back/Forward within a list that show each step as it was.
// Loaded from our origin, so the CSP needs no inline script.
(function () {
  'use strict';

  function localTimes(root) {
    root.querySelectorAll('time[datetime]').forEach(function (el) {
      var d = new Date(el.getAttribute('datetime'));
      if (isNaN(d.getTime())) return;
      var dateOnly = el.dataset.dateOnly === 'true';
      // A list's cells are one short line (the whole instant is in the title).
      var short = el.closest && el.closest('.list-table');
      el.textContent = dateOnly
        ? d.toLocaleDateString(undefined, { timeZone: 'UTC' })
        : short ? d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : d.toLocaleString();
      el.title = d.toISOString();
    });
  }

  function copyButtons(root) {
    root.querySelectorAll('[data-copy]').forEach(function (button) {
      button.hidden = false;
      button.addEventListener('click', function () {
        var source = document.getElementById(button.dataset.copy);
        if (!source || !navigator.clipboard) return;
        navigator.clipboard.writeText(source.innerText.trim()).then(function () { button.textContent = 'Copied'; });
      });
    });
  }

  function avatarPreview(root) {
    var input = root.querySelector('input[type=file][data-preview]');
    if (!input) return;
    input.addEventListener('change', function () {
      var img = document.getElementById(input.dataset.preview);
      var file = input.files && input.files[0];
      if (!img || !file) return;
      img.src = URL.createObjectURL(file);
      img.hidden = false;
    });
  }

  // Import forms post through htmx (hx-encoding=multipart/form-data); show how much is sent.
  document.addEventListener('htmx:xhr:progress', function (e) {
    var form = e.target.closest && e.target.closest('form[data-progress]');
    var bar = form && document.getElementById(form.dataset.progress);
    if (!bar || !e.detail.lengthComputable) return;
    bar.hidden = false;
    bar.max = e.detail.total;
    bar.value = e.detail.loaded;
  });

  // htmx keeps a copy of the page's HTML for Back and Forward within it, taken when the next search or filter has
  // already been typed or chosen, and HTML holds what the server sent anyway: Back showed a search's results under
  // the controls of another step. The copy gets the controls as they were when its results were shown.
  // Only the controls of forms whose requests push an address (the list's search and filters); passwords, hidden
  // fields and files are left alone (the copy is kept in sessionStorage).
  var CONTROLS = ['input:not([type=password]):not([type=hidden]):not([type=file])', 'textarea', 'select']
    .map(function (c) { return 'form[hx-push-url] ' + c; }).join(', ');
  var shown = [];
  function controlsState() {
    return Array.prototype.map.call(document.body.querySelectorAll(CONTROLS), function (el) {
      if (el.type === 'checkbox' || el.type === 'radio') return el.checked;
      if (el.tagName === 'SELECT') return Array.prototype.map.call(el.options, function (o) { return o.selected; });
      return el.value;
    });
  }
  function remember() { shown = controlsState(); }
  // The results shown answer the values sent, whatever was typed or chosen while they were on their way.
  document.addEventListener('htmx:beforeRequest', function (e) { if (e.detail.xhr) e.detail.xhr.leadbookControls = controlsState(); });
  // On the swap itself, not on settle (20 ms later): a Back within those 20 ms saved the new results with the
  // controls of the step before (seen once in CI at 390 px).
  document.addEventListener('htmx:afterSwap', function (e) { shown = (e.detail.xhr && e.detail.xhr.leadbookControls) || controlsState(); });
  document.addEventListener('htmx:historyRestore', remember);
  document.addEventListener('htmx:historyItemCreated', function (e) {
    var copy = document.createElement('template');
    copy.innerHTML = e.detail.item.content;
    var controls = copy.content.querySelectorAll(CONTROLS);
    if (controls.length !== shown.length) return;
    Array.prototype.forEach.call(controls, function (el, i) {
      var state = shown[i];
      if (el.type === 'checkbox' || el.type === 'radio') el.toggleAttribute('checked', state === true);
      else if (el.tagName === 'SELECT') Array.prototype.forEach.call(el.options, function (o, k) { o.toggleAttribute('selected', !!(state && state[k])); });
      else if (el.tagName === 'TEXTAREA') el.textContent = String(state);
      else el.setAttribute('value', String(state));
    });
    e.detail.item.content = copy.innerHTML;
  });

  // Leaving the search box fires a change, which asks for the address the typing already pushed: replace it then,
  // so that every Back step changes what is shown (htmx would push the same address twice).
  document.addEventListener('htmx:beforeHistoryUpdate', function (e) {
    var update = e.detail.history;
    if (update && update.type === 'push' && new URL(update.path, location.href).href === location.href.split('#')[0]) update.type = 'replace';
  });

  // A list's search and filters leave their empty fields out of the address (the server would redirect to it).
  document.addEventListener('htmx:configRequest', function (e) {
    if (e.detail.verb !== 'get' || !e.detail.elt.closest || !e.detail.elt.closest('form[hx-push-url]')) return;
    var params = e.detail.parameters;
    var empty = [];
    params.forEach(function (value, name) { if (value === '') empty.push(name); });
    empty.forEach(function (name) { params.delete(name); });
    // Enter in a field fires a change and a submit, and leaving it another change: each asked again for the list
    // just asked for, and its answer replaced the results under the pointer (a "Save view" opened in between closed
    // again). The same list is asked for once, unless the last answer failed.
    var asked = e.detail.path;
    params.forEach(function (value, name) { asked += '&' + name + '=' + value; });
    var form = e.detail.elt.closest('form[hx-push-url]');
    if (form.leadbookAsked === asked) e.preventDefault();
    else form.leadbookAsked = asked;
  });
  document.addEventListener('htmx:afterRequest', function (e) {
    var form = e.detail.elt.closest && e.detail.elt.closest('form[hx-push-url]');
    if (form && !e.detail.successful) form.leadbookAsked = undefined;
  });

  function init(root) {
    localTimes(root);
    copyButtons(root);
    avatarPreview(root);
  }

  document.addEventListener('DOMContentLoaded', function () { init(document); remember(); });
  document.addEventListener('htmx:afterSwap', function (e) { localTimes(e.target); });
})();
