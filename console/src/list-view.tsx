/**
 * A list the API answered, as every section shows one: loading, the API's error, an empty note, or a table of
 * the items with Previous/Next when the list is paged (`next_cursor`).
 */
import type { ReactNode } from 'react';
import { Empty, ErrorNotice, Loading } from './feedback';
import { Pager, type Paging } from './paging';
import type { Load } from './use-call';

interface Props<T> {
  load: Load<{ items: T[]; next_cursor?: string | null }>;
  /** What is listed, for the table's name and the loading note ("API keys"). */
  label: string;
  empty: string;
  headers: string[];
  row: (item: T) => ReactNode;
  paging?: Paging;
}

export function ListView<T>({ load, label, empty, headers, row, paging }: Props<T>) {
  if (load.state === 'loading') return <Loading what={label.toLowerCase()} />;
  if (load.state === 'failed') return <ErrorNotice error={load.error} />;
  if (load.data.items.length === 0) return <Empty>{empty}</Empty>;
  return (
    <>
      <table aria-label={label}>
        <thead>
          <tr>
            {headers.map((header) => (
              <th key={header}>{header}</th>
            ))}
          </tr>
        </thead>
        <tbody>{load.data.items.map(row)}</tbody>
      </table>
      {paging !== undefined && <Pager paging={paging} nextCursor={load.data.next_cursor ?? null} />}
    </>
  );
}

/** A filter on one of a few values ("any" for none), as the lists' `status` query takes it. */
export function ChoiceFilter<V extends string>({ label, value, choices, onChange }: { label: string; value: V | ''; choices: readonly V[]; onChange: (value: V | '') => void }) {
  return (
    <label>
      {label}
      <select value={value} onChange={(event) => onChange(event.target.value as V | '')}>
        <option value="">any</option>
        {choices.map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
    </label>
  );
}
