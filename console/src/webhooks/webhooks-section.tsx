/**
 * A partner's webhooks: its endpoints (create with the events to send, the signing secret shown once; delete) and
 * the deliveries made to them (filter by status, resend one). Both read the one list of endpoints: the deliveries
 * name theirs.
 */
import { PartnerPicker } from '../partner-picker';
import { useApi } from '../session';
import { useLoad } from '../use-call';
import { DeliveryList } from './delivery-list';
import { EndpointList } from './endpoint-list';

interface Props {
  partnerId: string | undefined;
  onChoosePartner: (partnerId: string) => void;
}

export function WebhooksSection({ partnerId, onChoosePartner }: Props) {
  return (
    <section aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhooks</h2>
      <PartnerPicker partnerId={partnerId} onChoose={onChoosePartner} />
      {partnerId !== undefined && <PartnerWebhooks key={partnerId} partnerId={partnerId} />}
    </section>
  );
}

function PartnerWebhooks({ partnerId }: { partnerId: string }) {
  const api = useApi();
  const endpoints = useLoad(() => api.listWebhookEndpoints(partnerId), [api, partnerId]);
  return (
    <>
      <EndpointList partnerId={partnerId} endpoints={endpoints} />
      <DeliveryList partnerId={partnerId} endpoints={endpoints.state === 'done' ? endpoints.data.items : []} />
    </>
  );
}
