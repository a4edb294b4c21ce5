/** Partners: create one, page through them, suspend or activate, edit fees, limits and branding. */
import { useState } from 'react';
import type { Partner } from '../api-types';
import { PartnerCreateForm } from './partner-create-form';
import { PartnerEditor } from './partner-editor';
import { PartnerList } from './partner-list';

export function PartnersSection({ onShowKeys }: { onShowKeys: (partnerId: string) => void }) {
  // Bumped after a change, so the list reads the partners again from its first page.
  const [listVersion, setListVersion] = useState(0);
  const [editing, setEditing] = useState<Partner | undefined>();
  const changed = () => setListVersion((version) => version + 1);
  return (
    <section aria-labelledby="partners-title">
      <h2 id="partners-title">Partners</h2>
      <PartnerCreateForm onCreated={changed} />
      {editing !== undefined && (
        <PartnerEditor
          key={editing.partner_id}
          partner={editing}
          onSaved={() => {
            setEditing(undefined);
            changed();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      <PartnerList key={listVersion} onEdit={setEditing} onShowKeys={onShowKeys} />
    </section>
  );
}
