import { cancelAllDetachedCaptures } from "./detached-capture-service.ts";
import type { Services } from "./services.ts";

/** What a server does before exiting: no owned work is left running, then the workspace closes. */
export async function shutdownServices(services: Services): Promise<void> {
  await cancelAllDetachedCaptures();
  services.close();
}
