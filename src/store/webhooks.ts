/** A webhook (0020_audit, src/services/webhooks.ts). */
export type WebhookRow = {
  readonly id: string;
  readonly url: string;
  readonly events: readonly string[];
  readonly pathPrefix: string | null;
  /** `whsec_<base64>` (Standard Webhooks). */
  readonly secret: string;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
  /** When the current run of failed attempts began; null while deliveries succeed. */
  readonly failingSince: number | null;
  /** Failed attempts in the current run. */
  readonly attempts: number;
  /** The next delivery attempt waits until then (backoff). */
  readonly nextAttemptAt: number;
  readonly createdAt: number;
};

export type WebhookChange = Partial<Pick<WebhookRow, 'url' | 'events' | 'pathPrefix' | 'enabled' | 'disabledReason' | 'failingSince' | 'attempts' | 'nextAttemptAt'>>;

export type DeliveryRow = {
  readonly id: string;
  readonly hookId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly attempt: number;
  readonly at: number;
  /** The HTTP status answered, null when none came (refused, timed out). */
  readonly status: number | null;
  readonly durationMs: number;
  readonly error: string | null;
  readonly nextRetryAt: number | null;
};

export interface WebhookRepo {
  /** Creates the hook with its starting cursor in each event source, in one transaction. */
  create(hook: WebhookRow, cursors: Readonly<Record<string, string>>): Promise<void>;
  get(id: string): Promise<WebhookRow | undefined>;
  list(): Promise<WebhookRow[]>;
  update(id: string, change: WebhookChange): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  cursor(hookId: string, source: string): Promise<string | undefined>;
  setCursor(hookId: string, source: string, cursor: string): Promise<void>;
  addDelivery(d: DeliveryRow): Promise<void>;
  /** Newest first. */
  deliveries(hookId: string, limit: number): Promise<DeliveryRow[]>;
  deleteDeliveriesBefore(at: number): Promise<void>;
}
