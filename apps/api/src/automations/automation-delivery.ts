/**
 * Where an automation's answer goes besides its chat and the consoles: a channel conversation (e.g. a Telegram chat).
 * The channels module provides AUTOMATION_DELIVERY (globally); without a provider, runs deliver nothing beyond their
 * chat and the `automation_run` notification, and an automation that names a delivery target is refused.
 *
 * A target must be a conversation of a sender the owner approved (checked when the automation is saved and again when
 * it runs): what the model writes in an automation can never make it send to someone the owner did not let in.
 */
import type { AutomationDelivery as AutomationDeliverySettings } from '@cashcode/contracts';

/** Injection token of the AutomationDelivery (optional). */
export const AUTOMATION_DELIVERY = Symbol('AutomationDelivery');

export type DeliveryTarget = NonNullable<AutomationDeliverySettings['channel']>;

export interface AutomationDelivery {
  /** null when the target may receive runs now; else why not, in one sentence for the owner */
  check(target: DeliveryTarget): Promise<string | null>;
  /** Sends `text` (Markdown) to the target conversation; a rejection is logged and never fails the run. */
  deliver(target: DeliveryTarget, text: string): Promise<void>;
}
