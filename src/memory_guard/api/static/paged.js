// One "load more" list, shared by the screens that page through the API: fetch a page, append its
// items, say how many are shown, offer the next page while the API gives a cursor.
import { errorBox } from "./dom.js";

export function pagedList({ fetchPage, render, target, summary, problems, more, counted }) {
  let cursor = null;
  let shown = 0;
  async function load() {
    more.disabled = true;
    try {
      const page = await fetchPage(cursor);
      const items = page.items ?? [];
      target.append(...items.map(render));
      shown += items.length;
      cursor = page.next_cursor;
      more.hidden = !cursor;
      summary.textContent = counted(shown);
      problems.replaceChildren();
    } catch (error) {
      summary.textContent = "";
      problems.replaceChildren(errorBox(error));
    } finally {
      more.disabled = false;
    }
  }
  more.addEventListener("click", load);
  load();
}
