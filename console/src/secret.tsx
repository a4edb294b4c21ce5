/** A secret shown once (an API key, an HMAC or webhook signing secret), with a button that copies it. */
import { useState } from 'react';

export function Secret({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState<'copied' | 'failed' | undefined>();
  const copy = () =>
    navigator.clipboard.writeText(value).then(
      () => setCopied('copied'),
      () => setCopied('failed'),
    );
  return (
    <div className="secret">
      <span>{label}</span>
      <code aria-label={label}>{value}</code>
      <button type="button" className="secondary" onClick={copy}>
        Copy
      </button>
      {copied === 'copied' && <span role="status">Copied</span>}
      {copied === 'failed' && <span role="status">Copy failed: select the text and copy it</span>}
    </div>
  );
}
