/**
 * A partner's webhooks: its endpoints (create with the events to send, the signing secret shown once; delete) and
 * the deliveries made to them (filter by status, resend one).
 */
import { PartnerPicker } from '../partner-picker';
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
      {partnerId !== undefined && (
        <>
          <EndpointList key={`endpoints-${partnerId}`} partnerId={partnerId} />
          <DeliveryList key={`deliveries-${partnerId}`} partnerId={partnerId} />
        </>
      )}
    </section>
  );
}
