/** What every call shows while it runs, when it fails, and when a list comes back empty. */
import type { ApiError } from './api';

export const Loading = ({ what }: { what: string }) => (
  <p className="loading" role="status">
    Loading {what}…
  </p>
);

export const ErrorNotice = ({ error }: { error: ApiError | undefined }) =>
  error === undefined ? null : (
    <p className="error" role="alert">
      {error.message} <code>{error.code}</code>
    </p>
  );

export const Empty = ({ children }: { children: string }) => <p className="empty">{children}</p>;
