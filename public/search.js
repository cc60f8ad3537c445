// The header's search box, made quicker. Without this script it is a form to
// /search (the results page); with it, typing shows suggestions grouped by
// resource (server-rendered by /search/suggestions, a fragment), chosen with
// the keyboard as the ARIA combobox pattern says: ArrowDown/ArrowUp move,
// Enter opens, Escape closes; "/" anywhere outside a text field comes here.
// On a phone the box is a button until it is opened. Loaded from our origin:
// the CSP needs no inline script.
(function () {
  'use strict';

  var form = document.querySelector('form.global-search');
  if (!form) return;
  var input = form.querySelector('input[name=q]');
  var button = form.querySelector('.gs-submit');
  var popup = form.querySelector('.gs-popup');
  var list = popup.querySelector('[role=listbox]');
  var note = popup.querySelector('.gs-note');
  var status = form.querySelector('.gs-status');

  // A word of three characters or more is served by the trigram index; shorter words alone would read every row,
  // so they wait for Enter (the results page) instead of being searched at each keystroke.
  var MIN_WORD = 3;
  var DELAY_MS = 200;
  var timer = 0;
  var inFlight = null;
  var shownFor = null;
  var active = -1;

  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-expanded', 'false');
  input.setAttribute('aria-controls', list.id);
  form.classList.add('gs-enhanced');

  var narrow = window.matchMedia('(max-width: 640px)');

  function options() { return list.querySelectorAll('[role=option]'); }

  function setActive(index) {
    var all = options();
    if (active >= 0 && all[active]) all[active].setAttribute('aria-selected', 'false');
    active = all.length ? index : -1;
    if (active < 0) { input.removeAttribute('aria-activedescendant'); return; }
    var option = all[active];
    option.setAttribute('aria-selected', 'true');
    input.setAttribute('aria-activedescendant', option.id);
    option.scrollIntoView({ block: 'nearest' });
  }

  function isOpen() { return !popup.hidden; }

  function close() {
    setActive(-1);
    popup.hidden = true;
    input.setAttribute('aria-expanded', 'false');
  }

  /** Shows what there is: the listbox when it has options, else the note alone. */
  function open() {
    var any = options().length > 0;
    list.hidden = !any;
    if (!any && note.hidden) return close();
    popup.hidden = false;
    input.setAttribute('aria-expanded', any ? 'true' : 'false');
  }

  function say(text) {
    note.textContent = text;
    note.hidden = !text;
  }

  function announce(text) { status.textContent = text; }

  function show(fragment, q) {
    setActive(-1);
    list.replaceChildren.apply(list, Array.prototype.slice.call(fragment.children));
    shownFor = q;
    var summary = fragment.getAttribute('data-summary') || '';
    say(fragment.getAttribute('data-count') === '0' ? summary : '');
    announce(summary);
    if (document.activeElement === input) open();
  }

  function searchable(q) {
    return q.split(/\s+/).some(function (word) { return Array.from(word).length >= MIN_WORD; });
  }

  function update() {
    var q = input.value.trim();
    if (q === shownFor) { if (q) open(); return; }
    if (inFlight) inFlight.abort();
    inFlight = null;
    if (!q) { shownFor = null; list.replaceChildren(); say(''); announce(''); close(); return; }
    if (!searchable(q)) {
      shownFor = null;
      list.replaceChildren();
      say('Keep typing (3 letters or more), or press Enter to search for “' + q + '”.');
      open();
      return;
    }
    var request = new AbortController();
    inFlight = request;
    fetch('/search/suggestions?q=' + encodeURIComponent(q), {
      headers: { accept: 'text/html' },
      credentials: 'same-origin',
      signal: request.signal,
    })
      .then(function (response) {
        // A session that ended is sent to sign in (a redirect): Enter leads there with the search kept.
        if (response.redirected) throw new Error('signed out');
        if (!response.ok) throw new Error('status ' + response.status);
        return response.text();
      })
      .then(function (html) {
        if (inFlight !== request) return;
        inFlight = null;
        var holder = document.createElement('template');
        holder.innerHTML = html;
        var fragment = holder.content.firstElementChild;
        if (fragment) show(fragment, q);
      })
      .catch(function (error) {
        if (request.signal.aborted || inFlight !== request) return;
        inFlight = null;
        shownFor = null;
        list.replaceChildren();
        say(error.message === 'signed out'
          ? 'Your session has ended: press Enter to sign in again and see the results.'
          : 'Suggestions are not available just now: press Enter to see the results.');
        announce(note.textContent);
        open();
      });
  }

  function stop() {
    clearTimeout(timer);
    if (inFlight) inFlight.abort();
    inFlight = null;
  }

  /** Opens the suggestions shown for the words in the box, or asks for them; whether they are open now. */
  function reopen() {
    if (input.value.trim() !== shownFor) {
      stop();
      update();
      return false;
    }
    open();
    return isOpen();
  }

  function go(option) {
    var href = option && option.getAttribute('data-href');
    if (href) window.location.assign(href);
  }

  function expand() {
    form.classList.add('gs-open');
  }

  function collapse() {
    if (input.value.trim() === '') form.classList.remove('gs-open');
  }

  input.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(update, DELAY_MS);
  });

  input.addEventListener('keydown', function (event) {
    if (event.isComposing) return;
    var count = options().length;
    switch (event.key) {
      case 'ArrowDown':
      case 'ArrowUp':
        event.preventDefault();
        if (!isOpen() && !reopen()) return;
        if (!count) return;
        if (event.key === 'ArrowDown') setActive(active < count - 1 ? active + 1 : 0);
        else setActive(active > 0 ? active - 1 : count - 1);
        break;
      case 'Enter':
        // With an option chosen it opens; otherwise the form goes to the results page.
        if (isOpen() && active >= 0) {
          event.preventDefault();
          go(options()[active]);
        }
        break;
      case 'Escape':
        // Suggestions on their way would open again what Escape closed.
        stop();
        if (isOpen()) {
          event.preventDefault();
          close();
        } else if (input.value) {
          event.preventDefault();
          input.value = '';
          update();
        } else if (narrow.matches) {
          form.classList.remove('gs-open');
          button.focus();
        }
        break;
      case 'Tab':
        close();
        break;
    }
  });

  input.addEventListener('focus', function () {
    expand();
    if (input.value.trim() && input.value.trim() === shownFor) open();
  });

  // Choosing with the pointer: the input keeps the focus (mousedown), the click opens the record.
  list.addEventListener('mousedown', function (event) { event.preventDefault(); });
  list.addEventListener('click', function (event) {
    var option = event.target.closest('[role=option]');
    if (option) go(option);
  });

  // On a phone the button first opens the box; once it is open (or on a desktop) it sends the form.
  button.addEventListener('click', function (event) {
    if (narrow.matches && !form.classList.contains('gs-open')) {
      event.preventDefault();
      expand();
      input.focus();
    }
  });

  form.addEventListener('focusout', function (event) {
    if (event.relatedTarget && form.contains(event.relatedTarget)) return;
    close();
    collapse();
  });

  function typing(target) {
    if (!target || !target.closest) return false;
    return target.isContentEditable || !!target.closest('input, textarea, select, [contenteditable]');
  }

  document.addEventListener('keydown', function (event) {
    if (event.key !== '/' || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    if (typing(event.target)) return;
    event.preventDefault();
    expand();
    input.focus();
    input.select();
  });
})();
