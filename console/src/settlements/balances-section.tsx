/**
 * A partner's balances (`GET /admin/partners/{partner_id}/balances`, decisions.md §5a): per merchant and currency,
 * the net of the sales waiting for settlement, the waiting reversals (refunds, disputes, dispute fees), what the
 * merchant owes, since when it owes (`owing_since`, with how many days) and what the next run would pay. A merchant
 * owing for more than 7 days is marked "Owing > 7 days" (decisions.md §5a; `owing.ts`). By default only the
 * merchants that owe money (`owing=true`): no payout is made to them until later sales cover what they owe.
 */
import { type FormEvent, useState } from 'react';
import type { Balance } from '../api-types';
import { money, when } from '../format';
import { ListView } from '../list-view';
import { useCursor } from '../paging';
import { PartnerPicker } from '../partner-picker';
import { useApi } from '../session';
import { useLoad } from '../use-call';
import { OWING_ALERT_DAYS, owingAge } from './owing';

interface Props {
  partnerId: string | undefined;
  onChoosePartner: (partnerId: string) => void;
}

export function BalancesSection({ partnerId, onChoosePartner }: Props) {
  return (
    <section aria-labelledby="balances-title">
      <h2 id="balances-title">Balances</h2>
      <p className="hint">
        What waits for settlement, per merchant and currency. A merchant <strong>owes</strong> when its waiting refunds and disputes exceed its waiting
        sales: no batch is made for it until later sales cover the shortfall. <strong>Owing since</strong> is when its oldest waiting reversal was
        written; a merchant owing for more than {OWING_ALERT_DAYS} days is marked <em>Owing &gt; {OWING_ALERT_DAYS} days</em>.
      </p>
      <PartnerPicker partnerId={partnerId} onChoose={onChoosePartner} />
      {partnerId !== undefined && <PartnerBalances key={partnerId} partnerId={partnerId} />}
    </section>
  );
}

const NO_FILTERS = { client_id: '', currency: '' };

function PartnerBalances({ partnerId }: { partnerId: string }) {
  const api = useApi();
  const [owingOnly, setOwingOnly] = useState(true);
  const [draft, setDraft] = useState(NO_FILTERS);
  const [filters, setFilters] = useState(NO_FILTERS);
  const paging = useCursor();
  const page = useLoad(
    () => api.listBalances(partnerId, { owing: owingOnly, client_id: filters.client_id.trim(), currency: filters.currency.trim() }, paging.cursor),
    [api, partnerId, owingOnly, filters, paging.cursor],
  );
  const apply = (event: FormEvent) => {
    event.preventDefault();
    paging.first();
    setFilters(draft);
  };
  return (
    <>
      <form className="panel picker" aria-label="Filter balances" onSubmit={apply}>
        <label className="checkbox">
          <input
            type="checkbox"
            checked={owingOnly}
            onChange={(event) => {
              paging.first();
              setOwingOnly(event.target.checked);
            }}
          />
          Only merchants that owe
        </label>
        <label>
          Merchant (client_id)
          <input value={draft.client_id} onChange={(event) => setDraft({ ...draft, client_id: event.target.value })} />
        </label>
        <label>
          Currency
          <input placeholder="USD" maxLength={3} value={draft.currency} onChange={(event) => setDraft({ ...draft, currency: event.target.value })} />
        </label>
        <button type="submit" className="secondary">
          Filter
        </button>
      </form>
      <ListView
        load={page}
        label="Balances"
        empty={owingOnly ? 'No merchant of this partner owes money.' : 'Nothing of this partner waits for settlement.'}
        headers={['Merchant', 'Currency', 'Unsettled net', 'Waiting reversals', 'Owed', 'Owing since', 'Next payout estimate']}
        paging={paging}
        row={(balance) => <BalanceRow key={`${balance.client_id} ${balance.currency}`} balance={balance} />}
      />
    </>
  );
}

function BalanceRow({ balance }: { balance: Balance }) {
  const { currency } = balance;
  const owes = balance.owed > 0;
  const age = owingAge(balance.owing_since, new Date());
  return (
    <tr className={owes ? 'owing' : undefined}>
      <td>{balance.client_id}</td>
      <td>{currency}</td>
      <td>{money(balance.unsettled_net, currency)}</td>
      <td>{money(balance.waiting_reversals, currency)}</td>
      <td>{owes ? <strong className="badge owed">Owes {money(balance.owed, currency)}</strong> : money(balance.owed, currency)}</td>
      <td className="owing-since">
        {balance.owing_since === null || age === null ? (
          '—'
        ) : (
          <>
            <time dateTime={balance.owing_since}>{when(balance.owing_since)}</time> <span className="age">({age.text})</span>
            {age.overdue && (
              <>
                {' '}
                <strong className="badge overdue">Owing &gt; {OWING_ALERT_DAYS} days</strong>
              </>
            )}
          </>
        )}
      </td>
      <td>{money(balance.next_payout_estimate, currency)}</td>
    </tr>
  );
}
