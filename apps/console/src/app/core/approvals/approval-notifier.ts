import { DOCUMENT, Injectable, inject, signal } from '@angular/core';

export type NotificationState = NotificationPermission | 'unsupported';

export interface ApprovalNotice {
  /** one notification per approval (a repeat replaces it) */
  tag: string;
  title: string;
  body: string;
}

function notificationApi(): typeof Notification | null {
  return typeof Notification === 'function' ? Notification : null;
}

/**
 * Browser notifications for approvals that wait while the tab is hidden. Permission is asked only from a user
 * gesture (a button on an approval card or in the settings), never on load; without it nothing is shown.
 */
@Injectable({ providedIn: 'root' })
export class ApprovalNotifier {
  private readonly document = inject(DOCUMENT);
  private readonly state = signal<NotificationState>(notificationApi()?.permission ?? 'unsupported');

  readonly permission = this.state.asReadonly();

  /** Asks for permission; call it from a click handler. */
  async requestPermission(): Promise<NotificationState> {
    const api = notificationApi();
    if (!api) return 'unsupported';
    try {
      this.state.set(await api.requestPermission());
    } catch {
      this.state.set(api.permission);
    }
    return this.state();
  }

  /** Shows the notice when the tab is hidden and permission was granted; true when shown. */
  notify(notice: ApprovalNotice, onClick: () => void): boolean {
    const api = notificationApi();
    if (!api || api.permission !== 'granted' || this.document.visibilityState !== 'hidden') return false;
    try {
      const notification = new api(notice.title, { body: notice.body, tag: notice.tag, requireInteraction: true });
      notification.onclick = () => {
        this.document.defaultView?.focus();
        notification.close();
        onClick();
      };
      return true;
    } catch {
      // some browsers only allow notifications from a service worker: the sidebar mark still shows the wait
      return false;
    }
  }
}
