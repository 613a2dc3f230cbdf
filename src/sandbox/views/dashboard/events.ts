/** The dashboard's live view: Server-Sent Events after each change of the sandbox's state. */
import type { DashboardContext } from './parts.js';

/** Server-Sent Events: `change` after each change of the state (at most every 200 ms), a comment every 15 s. */
export function events(context: DashboardContext, request: Request): Response {
  const encoder = new TextEncoder();
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      const unwatch = context.control.watch(() => {
        timer ??= setTimeout(() => {
          timer = undefined;
          send(`event: change\ndata: ${Date.now()}\n\n`);
        }, 200);
      });
      const heartbeat = setInterval(() => send(': still here\n\n'), 15_000);
      (heartbeat as { unref?: () => void }).unref?.();
      const end = () => {
        stop();
        try {
          controller.close();
        } catch {
          // already closed
        }
      };
      stop = () => {
        context.removed.removeEventListener('abort', end);
        unwatch();
        clearInterval(heartbeat);
        if (timer) clearTimeout(timer);
      };
      request.signal.addEventListener('abort', end);
      // The tenant is being removed: the stream ends, and the browser's reconnection finds it gone (404).
      context.removed.addEventListener('abort', end, { once: true });
      send('retry: 2000\n\n');
    },
    cancel() {
      stop();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
}
