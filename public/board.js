// The pipeline board's script (served to /inquiries/board only). The board works without it: a card's Move button
// posts the board's form (#board-move) to the card's address and the page comes back. This adds drag and drop, and
// moves without a reload: the card moves at once, the server is asked (JSON), and a refusal puts the card back; the
// status line says what happened, and a screen reader reads it out. Loaded from our origin, so the CSP needs no
// inline script.
(function () {
  'use strict';
  var board = document.getElementById('board');
  var status = document.getElementById('board-status');
  var form = document.getElementById('board-move');
  if (!board || !status || !form || !window.fetch || !window.URLSearchParams) return;

  function say(text, error) {
    status.className = 'board-status flash ' + (error ? 'flash-error' : 'flash-success');
    // The same words twice in a row are still read out: empty the region first.
    status.textContent = '';
    setTimeout(function () { status.textContent = text; }, 30);
  }

  function columnOf(stageId) { return board.querySelector('.board-column[data-stage="' + stageId + '"]'); }

  function count(column, change) {
    var n = column && column.querySelector('[data-count]');
    // A count that stopped at its cap ("1,000+") stays as it is.
    if (!n || n.hasAttribute('data-capped')) return;
    var value = Math.max(0, parseInt(n.textContent, 10) + change);
    n.textContent = String(value);
    var word = n.nextElementSibling;
    if (word) word.textContent = value === 1 ? ' inquiry' : ' inquiries';
  }

  /** Puts the card in a column's list where the server would (newest first), or takes it off the board. */
  function place(card, column) {
    var from = card.parentElement && card.parentElement.closest('.board-column');
    if (from === column) return;
    var focused = card.contains(document.activeElement) ? document.activeElement : null;
    if (from) count(from, -1);
    if (!column) {
      card.remove();
      return;
    }
    var list = column.querySelector('.board-cards');
    var id = Number(card.dataset.id);
    var before = Array.prototype.find.call(list.children, function (other) { return Number(other.dataset.id) < id; });
    list.insertBefore(card, before || null);
    card.dataset.stage = column.dataset.stage;
    count(column, 1);
    // Moving an element takes the focus away from it: give it back to the control that had it.
    if (focused) focused.focus();
  }

  /** Where the focus goes when its card leaves the board (a closed stage's column is not shown). */
  function focusAfterLeaving(card) {
    var next = card.nextElementSibling || card.previousElementSibling;
    var target = next && next.querySelector('select');
    if (!target) target = card.closest('.board-column').querySelector('h2');
    return target;
  }

  function move(card, stageId) {
    var select = card.querySelector('.board-move select');
    var button = card.querySelector('.board-move button');
    if (!select || !button || card.getAttribute('aria-busy') === 'true') return;
    var from = card.closest('.board-column');
    var previous = card.dataset.stage;
    var name = card.dataset.name;
    var option = select.querySelector('option[value="' + stageId + '"]');
    if (stageId === previous) {
      say(name + ' is already in ' + (option ? option.textContent : 'that stage') + '.');
      return;
    }
    select.value = stageId;
    // The form's own fields (the CSRF token, the view) and this card's stage, not every card's select.
    var body = new URLSearchParams();
    Array.prototype.forEach.call(form.querySelectorAll('input'), function (input) {
      body.append(input.name, input.value);
    });
    body.set('stage_id', stageId);
    var to = columnOf(stageId);
    var hadFocus = card.contains(document.activeElement);
    var landing = to ? null : focusAfterLeaving(card);
    place(card, to);
    if (!to && hadFocus && landing) landing.focus();
    card.setAttribute('aria-busy', 'true');
    var undo = function (text) {
      place(card, from);
      card.dataset.stage = previous;
      select.value = previous;
      say(text, true);
    };
    fetch(button.formAction, {
      method: 'POST',
      body: body,
      headers: { accept: 'application/json' },
      credentials: 'same-origin',
      redirect: 'manual',
    })
      .then(function (response) {
        // The session ended: the page itself leads to the sign-in and back.
        if (response.type === 'opaqueredirect') return location.reload();
        if (!/json/.test(response.headers.get('content-type') || '')) {
          return undo(name + ' was not moved: the page is out of date. Reload it and try again.');
        }
        return response.json().then(function (answer) {
          if (!response.ok) return undo(answer.message);
          say(answer.message);
        });
      })
      .catch(function () { undo(name + ' was not moved: the server could not be reached. Try again.'); })
      .then(function () { card.removeAttribute('aria-busy'); });
  }

  // Choosing a stage with the mouse moves the card at once. Choosing it with the keys (arrows step through the
  // stages) waits for Enter or the Move button, so stepping past a stage does not move the card there.
  var keyed = null;
  board.addEventListener('keydown', function (e) {
    var select = e.target.closest && e.target.closest('.board-move select');
    if (!select) return;
    if (e.key === 'Enter') {
      e.preventDefault();
      keyed = null;
      move(select.closest('.board-card'), select.value);
    } else if (e.key !== 'Tab' && e.key !== 'Shift') keyed = select;
  });
  board.addEventListener('pointerdown', function () { keyed = null; });
  board.addEventListener('change', function (e) {
    var select = e.target.closest && e.target.closest('.board-move select');
    if (!select || keyed === select) return;
    move(select.closest('.board-card'), select.value);
  });
  form.addEventListener('submit', function (e) {
    var card = e.submitter && e.submitter.closest('.board-card');
    if (!card) return;
    e.preventDefault();
    keyed = null;
    move(card, card.querySelector('.board-move select').value);
  });

  // Drag and drop: a card the viewer may move can be dropped on another column.
  var dragged = null;
  Array.prototype.forEach.call(board.querySelectorAll('.board-card'), function (card) {
    if (card.querySelector('.board-move')) {
      card.draggable = true;
      card.classList.add('is-draggable');
    }
  });
  board.addEventListener('dragstart', function (e) {
    var card = e.target.closest && e.target.closest('.board-card.is-draggable');
    if (!card) return;
    dragged = card;
    e.dataTransfer.effectAllowed = 'move';
    e.dataTransfer.setData('text/plain', card.dataset.name);
    card.classList.add('is-dragging');
  });
  board.addEventListener('dragend', function () {
    if (dragged) dragged.classList.remove('is-dragging');
    dragged = null;
    Array.prototype.forEach.call(board.querySelectorAll('.is-over'), function (c) { c.classList.remove('is-over'); });
  });
  board.addEventListener('dragover', function (e) {
    var column = e.target.closest && e.target.closest('.board-column');
    if (!dragged || !column) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
    if (column.dataset.stage !== dragged.dataset.stage) column.classList.add('is-over');
  });
  board.addEventListener('dragleave', function (e) {
    var column = e.target.closest && e.target.closest('.board-column');
    if (column && !column.contains(e.relatedTarget)) column.classList.remove('is-over');
  });
  board.addEventListener('drop', function (e) {
    var column = e.target.closest && e.target.closest('.board-column');
    if (!dragged || !column) return;
    e.preventDefault();
    column.classList.remove('is-over');
    var card = dragged;
    if (column.dataset.stage !== card.dataset.stage) move(card, column.dataset.stage);
  });
})();
