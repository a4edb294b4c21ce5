/** Paging by the API's `next_cursor`: the cursors of the pages seen, so Previous goes back without a new query. */
import { useState } from 'react';

export type Paging = ReturnType<typeof useCursor>;

export function useCursor() {
  const [cursors, setCursors] = useState<string[]>([]);
  return {
    cursor: cursors.at(-1),
    pageNumber: cursors.length + 1,
    next: (nextCursor: string) => setCursors((seen) => [...seen, nextCursor]),
    previous: () => setCursors((seen) => seen.slice(0, -1)),
    first: () => setCursors([]),
  };
}

export function Pager({ paging, nextCursor }: { paging: Paging; nextCursor: string | null }) {
  if (paging.pageNumber === 1 && nextCursor === null) return null;
  return (
    <div className="pager">
      <button type="button" className="secondary" disabled={paging.pageNumber === 1} onClick={paging.previous}>
        Previous
      </button>
      <span>Page {paging.pageNumber}</span>
      <button type="button" className="secondary" disabled={nextCursor === null} onClick={() => nextCursor !== null && paging.next(nextCursor)}>
        Next
      </button>
    </div>
  );
}
