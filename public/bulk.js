// The list page's bulk bar (views/bulk-bar.tsx). The bar works without this script: it is always shown, its
// choices post the ticked rows and the page comes back with a message. This shows the bar only once a row is ticked,
// adds "select all on this page" and "Select all N matching", asks before a deletion in the bar itself, and does
// the work in parts (POST /{r}/bulk with the form's CSRF token, as JSON) with a progress bar; at the end the
// message says what was done, and the list is read again. The results are swapped by htmx on every search, so
// everything here listens on the document. Loaded from our origin, so the CSP needs no inline script.
(function () {
  'use strict';
  if (!window.fetch || !window.URLSearchParams || !window.FormData) return;

  /** Ids per request: a few parts for a few hundred records (the bar moves), at most 500 (a transaction each). */
  var SMALLEST = 100, LARGEST = 500, PARTS = 20;
  var VERBS = { assign: 'Assigning', stage: 'Moving', state: 'Setting', delete: 'Moving to the trash' };
  var busy = false;

  function bar() { return document.getElementById('bulk-form'); }
  function rows() { return Array.prototype.slice.call(document.querySelectorAll('input[data-bulk-row]')); }
  function part(form, name) { return form.querySelector('[data-bulk-' + name + ']'); }
  function scopeBox(form) { return form.querySelector('input[name=scope]'); }
  function number(n) { return Number(n).toLocaleString('en-US'); }
  function noun(form, n) { return number(n) + ' ' + (n === 1 ? form.dataset.singular : form.dataset.plural); }

  /** How many records the bar acts on now: the ticked rows, or all that match. */
  function selected(form) {
    var all = scopeBox(form);
    if (all && all.checked) return Number(form.dataset.total);
    return rows().filter(function (box) { return box.checked; }).length;
  }

  /** Brings the bar, the page's box and the counts in line with what is ticked. */
  function refresh() {
    var form = bar();
    if (!form) return;
    var boxes = rows();
    var ticked = boxes.filter(function (box) { return box.checked; }).length;
    var all = scopeBox(form);
    var everything = !!(all && all.checked);
    var page = document.querySelector('input[data-bulk-page]');
    if (page) {
      page.hidden = false;
      page.checked = boxes.length > 0 && ticked === boxes.length;
      page.indeterminate = ticked > 0 && ticked < boxes.length;
    }
    var scope = part(form, 'scope');
    if (scope) scope.hidden = true;
    if (!busy) form.hidden = ticked === 0 && !everything;
    form.classList.add('bulk-bar-js');
    var n = selected(form);
    var count = part(form, 'count');
    var text = everything
      ? 'All ' + noun(form, n) + ' that match are selected.'
      : n === 0 ? '' : noun(form, n) + ' selected.';
    if (count.textContent !== text) count.textContent = text;
    var more = part(form, 'all');
    if (more) more.hidden = everything || ticked === 0 || ticked < boxes.length;
    part(form, 'clear').hidden = n === 0;
    var question = part(form, 'delete-text');
    if (question)
      question.textContent = 'Move ' + noun(form, n) + ' to the trash? You can restore them from the Trash page.';
  }

  function tickAll(on) {
    rows().forEach(function (box) { box.checked = on; });
  }

  document.addEventListener('change', function (e) {
    var target = e.target;
    var form = bar();
    if (!form || !target.matches) return;
    if (target.matches('input[data-bulk-page]')) {
      tickAll(target.checked);
      if (!target.checked && scopeBox(form)) scopeBox(form).checked = false;
    } else if (target.matches('input[data-bulk-row]')) {
      // Unticking one row is no longer "all that match".
      if (!target.checked && scopeBox(form)) scopeBox(form).checked = false;
    } else if (target.id === 'bulk-state-field') {
      // Each state has its own words for yes, no and not set.
      var words = form.querySelector('template[data-bulk-words="' + target.value + '"]');
      var value = document.getElementById('bulk-state-value');
      if (words && value) value.replaceChildren(words.content.cloneNode(true));
    } else return;
    refresh();
  });

  document.addEventListener('click', function (e) {
    var form = bar();
    // A click elsewhere closes the bar's open menu.
    if (form && e.target.closest)
      form.querySelectorAll('details[data-bulk-menu][open]').forEach(function (menu) {
        if (!menu.contains(e.target)) menu.open = false;
      });
    var target = e.target.closest ? e.target.closest('button') : null;
    if (!form || !target || !form.contains(target)) return;
    if (target.matches('[data-bulk-all]')) {
      tickAll(true);
      scopeBox(form).checked = true;
      refresh();
      part(form, 'clear').focus();
    } else if (target.matches('[data-bulk-clear]')) {
      tickAll(false);
      if (scopeBox(form)) scopeBox(form).checked = false;
      refresh();
      var first = document.querySelector('input[data-bulk-page]') || rows()[0];
      if (first) first.focus();
    }
  });

  // One menu of the bar open at a time; Escape closes it and gives the focus back to its button.
  document.addEventListener('toggle', function (e) {
    var menu = e.target;
    if (!menu.matches || !menu.matches('details[data-bulk-menu]') || !menu.open) return;
    bar().querySelectorAll('details[data-bulk-menu][open]').forEach(function (other) {
      if (other !== menu) other.open = false;
    });
    var control = menu.querySelector('select, button[type=submit]');
    if (control) control.focus();
  }, true);
  document.addEventListener('keydown', function (e) {
    if (e.key !== 'Escape') return;
    var menu = e.target.closest && e.target.closest('details[data-bulk-menu][open]');
    if (!menu) return;
    menu.open = false;
    menu.querySelector('summary').focus();
  });

  /** The message of the whole run, where the page shows messages (its top), focused so that it is read out. */
  function tell(text, kind, trashLink) {
    var main = document.getElementById('main');
    var place = document.getElementById('flash');
    if (!place) {
      place = document.createElement('div');
      place.id = 'flash';
      main.insertBefore(place, main.firstChild);
    }
    var p = document.createElement('p');
    p.className = 'flash flash-' + kind;
    p.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    p.tabIndex = -1;
    p.textContent = text;
    if (trashLink) {
      p.appendChild(document.createTextNode(' '));
      var a = document.createElement('a');
      a.href = '/trash';
      a.textContent = 'Open the trash';
      p.appendChild(a);
    }
    place.replaceChildren(p);
    p.focus();
  }

  /** "Updated 25 inquiries; 2 could not be changed: Ann (not yours), Bo (not yours)." */
  function summary(form, action, done, failed) {
    var head = action === 'delete' ? 'Moved ' + noun(form, done) + ' to the trash' : 'Updated ' + noun(form, done);
    if (!failed.length) return head + '.';
    var listed = failed.slice(0, 5).map(function (f) { return f.title + ' (' + f.reason + ')'; }).join(', ');
    var more = failed.length > 5 ? ', and ' + number(failed.length - 5) + ' more' : '';
    var verb = action === 'delete' ? 'deleted' : 'changed';
    if (!done) return 'None of the ' + noun(form, failed.length) + ' could be ' + verb + ': ' + listed + more + '.';
    return head + '; ' + number(failed.length) + ' could not be ' + verb + ': ' + listed + more + '.';
  }

  function answer(response) {
    var type = response.headers.get('content-type') || '';
    if (!/json/.test(type)) throw new Error('Your session has ended: reload the page and sign in again.');
    return response.json().then(function (body) {
      if (response.ok) return body;
      // A refusal names what was wrong (the list matching too many, a choice missing) where the detail is general.
      var named = body.errors ? Object.keys(body.errors) : [];
      var said = named.map(function (name) {
        var what = { query: 'The list', ids: 'The selection' }[name];
        return (what ? what + ' ' : '') + body.errors[name].join('; ');
      });
      throw new Error(named.length && /invalid fields/.test(body.detail) ? said.join('. ') + '.' : body.detail);
    });
  }

  /** The ids the bar acts on: the ticked rows, or (all that match) the ones the server lists for the query. */
  function targets(form) {
    var all = scopeBox(form);
    if (!(all && all.checked))
      return Promise.resolve(rows().filter(function (b) { return b.checked; }).map(function (b) { return b.value; }));
    var query = form.querySelector('input[name=query]').value;
    return fetch('/' + form.dataset.resource + '/bulk/ids' + (query ? '?' + query : ''), {
      headers: { accept: 'application/json' },
      credentials: 'same-origin',
    }).then(answer).then(function (body) { return body.ids; });
  }

  /** The list's results as they are now, read again as the list's live search reads them (the message stays). */
  function reload() {
    var results = document.getElementById('results');
    if (!results) return Promise.resolve();
    return fetch(location.pathname + location.search, {
      headers: { 'hx-request': 'true', 'hx-target': 'results' },
      credentials: 'same-origin',
    }).then(function (response) {
      if (!response.ok) return;
      return response.text().then(function (html) {
        var fresh = new DOMParser().parseFromString(html, 'text/html').getElementById('results');
        if (!fresh) return;
        results.replaceWith(fresh);
        if (window.htmx) window.htmx.process(fresh);
        // What the page's other scripts do with new results (local times, the history's copy) they do on htmx's
        // event: it is told as htmx tells it.
        fresh.dispatchEvent(new CustomEvent('htmx:afterSwap', { bubbles: true, detail: { target: fresh, elt: fresh } }));
      });
    }).catch(function () {});
  }

  function run(form, action) {
    var progress = part(form, 'progress');
    var bar = progress.querySelector('progress');
    var label = part(form, 'progress-label');
    var status = part(form, 'progress-text');
    var buttons = form.querySelectorAll('button, summary, select');
    var done = 0, failed = [], total = 0;
    // What the form says, read before its controls are disabled (a disabled control sends nothing).
    var base = new URLSearchParams();
    new FormData(form).forEach(function (value, key) { if (key !== 'ids' && key !== 'scope') base.append(key, value); });
    base.set('action', action);
    base.set('confirmed', '1');
    var token = base.get('_csrf');
    busy = true;
    form.setAttribute('aria-busy', 'true');
    buttons.forEach(function (b) { b.setAttribute('disabled', ''); });
    form.querySelectorAll('details[open]').forEach(function (d) { d.open = false; });
    label.textContent = (VERBS[action] || 'Working') + '…';
    bar.removeAttribute('value');
    status.textContent = '';
    progress.hidden = false;

    function step(ids, at, size) {
      if (at >= ids.length) return Promise.resolve();
      var body = new URLSearchParams(base);
      body.set('ids', ids.slice(at, at + size).join(','));
      return fetch(form.getAttribute('action'), {
        method: 'POST',
        body: body,
        headers: { accept: 'application/json', 'x-csrf-token': token },
        credentials: 'same-origin',
      }).then(answer).then(function (result) {
        done += result.done;
        failed = failed.concat(result.failed);
        var reached = Math.min(ids.length, at + size);
        bar.value = reached;
        status.textContent = number(reached) + ' of ' + number(ids.length);
        return step(ids, reached, size);
      });
    }

    return targets(form).then(function (ids) {
      total = ids.length;
      var size = Math.min(LARGEST, Math.max(SMALLEST, Math.ceil(total / PARTS)));
      bar.max = Math.max(1, total);
      bar.value = 0;
      status.textContent = '0 of ' + number(total);
      return step(ids, 0, size);
    }).then(function () {
      tell(summary(form, action, done, failed), done || !failed.length ? 'success' : 'error', action === 'delete' && done > 0);
    }, function (error) {
      var so = done ? ' ' + summary(form, action, done, failed) : ' Nothing was changed.';
      tell(error.message + (total && done < total ? so : ''), 'error', false);
    }).then(function () {
      busy = false;
      form.removeAttribute('aria-busy');
      buttons.forEach(function (b) { b.removeAttribute('disabled'); });
      progress.hidden = true;
      tickAll(false);
      if (scopeBox(form)) scopeBox(form).checked = false;
      refresh();
      return reload();
    });
  }

  document.addEventListener('submit', function (e) {
    var form = e.target;
    if (form.id !== 'bulk-form') return;
    var button = e.submitter;
    var action = button && button.value;
    // An export is a download: the form posts and the server sends the file's address.
    if (!action || action === 'export') return;
    e.preventDefault();
    if (busy) return;
    var needed = button.closest('.bulk-pop') && button.closest('.bulk-pop').querySelector('select[data-bulk-needed]');
    if (needed && !needed.value) {
      needed.setCustomValidity('Choose one first.');
      needed.reportValidity();
      needed.addEventListener('change', function clear() {
        needed.setCustomValidity('');
        needed.removeEventListener('change', clear);
      });
      return;
    }
    if (selected(form) === 0) return;
    run(form, action);
  });

  document.addEventListener('htmx:afterSwap', refresh);
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', refresh);
  else refresh();
})();
