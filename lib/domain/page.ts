/** One page of a list (decisions.md §9): its items, newest first, and the sealed cursor of the next page (`null` on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}
