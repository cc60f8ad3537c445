// The search box in the header of every signed-in page: a plain form to the
// results page (/search), which public/search.js turns into a combobox with
// suggestions as you type, and reaches with "/" from anywhere.

const MagnifierIcon = () => (
  <svg viewBox="0 0 20 20" width="18" height="18" aria-hidden="true" focusable="false">
    <circle cx="8.5" cy="8.5" r="5.5" fill="none" stroke="currentColor" stroke-width="2" />
    <path d="M12.5 12.5 17 17" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
  </svg>
);

/**
 * The header's box. Without the script it is a form to the results page (on a phone the button alone, which leads
 * there); the script makes the input a combobox whose suggestions (the listbox) come from /search/suggestions.
 */
export function SearchBox() {
  return (
    // biome-ignore lint/a11y/useSemanticElements: <search> is newer than some browsers the app supports
    <form method="get" action="/search" role="search" aria-label="Quick search" class="global-search">
      <label for="global-search" class="visually-hidden">
        Search Leadbook
      </label>
      <div class="gs-field">
        <input
          id="global-search"
          type="search"
          name="q"
          maxlength={200}
          placeholder="Search"
          autocomplete="off"
          aria-keyshortcuts="/"
          aria-describedby="global-search-hint"
        />
        {/* The shortcut, shown while the box is empty and idle; aria-keyshortcuts tells a screen reader. */}
        <span class="gs-key" aria-hidden="true">
          /
        </span>
        <button type="submit" class="gs-submit">
          <MagnifierIcon />
          <span class="visually-hidden">Search</span>
        </button>
      </div>
      <span id="global-search-hint" class="visually-hidden">
        Press slash to come here from anywhere on the page.
      </span>
      <div class="gs-popup" hidden>
        <div role="listbox" id="global-search-list" aria-label="Suggestions" hidden />
        <p class="gs-note" hidden />
      </div>
      <p class="gs-status visually-hidden" role="status" />
    </form>
  );
}
