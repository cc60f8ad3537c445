// Leadbook's only script of its own. Everything works without it; it adds
// local times, copy/download of recovery codes, an avatar preview and upload
// progress. Loaded from our origin, so the CSP needs no inline script.
(function () {
  'use strict';

  function localTimes(root) {
    root.querySelectorAll('time[datetime]').forEach(function (el) {
      var d = new Date(el.getAttribute('datetime'));
      if (isNaN(d.getTime())) return;
      var dateOnly = el.dataset.dateOnly === 'true';
      el.textContent = dateOnly ? d.toLocaleDateString(undefined, { timeZone: 'UTC' }) : d.toLocaleString();
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

  function init(root) {
    localTimes(root);
    copyButtons(root);
    avatarPreview(root);
  }

  document.addEventListener('DOMContentLoaded', function () { init(document); });
  document.addEventListener('htmx:afterSwap', function (e) { localTimes(e.target); });
})();
