/**
 * The alarm every stack raises the same way: any occurrence in one period breaches (a quiet period is fine), and it
 * notifies the alarm topic. One place, so the scheduled jobs' and the delivery's alarms page alike.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IMetric, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE, SERVICE_NAME } from './observability';

/** An alarm when `metric` reaches `threshold` (default 1) in one period; missing data does not breach. */
export function pagingAlarm(scope: Construct, id: string, props: { description: string; metric: IMetric; threshold?: number; topic: ITopic }): Alarm {
  const alarm = new Alarm(scope, id, {
    alarmDescription: props.description,
    metric: props.metric,
    threshold: props.threshold ?? 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  alarm.addAlarmAction(new SnsAction(props.topic));
  return alarm;
}

/** One of the service's own EMF metrics (`lib/observability.ts`: its namespace and `service` dimension). */
export const serviceMetric = (metricName: string, statistic: 'Sum' | 'Maximum', period: Duration): Metric =>
  new Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service: SERVICE_NAME }, statistic, period });
