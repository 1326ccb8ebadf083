// Requests that wait for the person while they look elsewhere: how many sessions wait, in the tab's title, and a
// browser notification for each new permission or question while the tab is hidden. The browser's permission
// to notify is asked for only when the person clicks "Notify me" (browsers ignore, and users resent, a request
// made on load); clicking a notification brings the tab forward on the request.
export class Attention {
  constructor({ baseTitle, onOpen }) {
    this.baseTitle = baseTitle;
    this.onOpen = onOpen;  // (sessionId) => void
    this.waiting = 0;
  }

  static supported() {
    return typeof window.Notification === "function";
  }

  static enabled() {
    return Attention.supported() && Notification.permission === "granted";
  }

  // Call from a click handler only.
  async enable() {
    if (!Attention.supported()) return "unsupported";
    return Notification.requestPermission();
  }

  // `waiting`: sessions with a permission or question open.
  setWaiting(waiting) {
    if (waiting === this.waiting) return;
    this.waiting = waiting;
    document.title = waiting ? `(${waiting}) ${this.baseTitle}` : this.baseTitle;
  }

  // A permission.requested or question.requested event; `session` its SessionInfo, if known.
  announce(event, session) {
    if (document.visibilityState !== "hidden" || !Attention.enabled()) return;
    const request = event.data.request;
    const where = session ? session.title || session.cwd : event.sessionId;
    const title = event.type === "permission.requested" ? `Permission: ${request.tool}` : "A question for you";
    const body = `${where}: ${request.description || request.questions?.[0]?.question || ""}`.slice(0, 200);
    // The tag makes a repeated announcement (a replay after a reconnect) replace the first, not add to it.
    const notification = new Notification(title, { body, tag: request.requestId });
    notification.onclick = () => {
      window.focus();
      this.onOpen(event.sessionId);
      notification.close();
    };
  }
}
