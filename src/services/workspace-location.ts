/** How transports find the workspace: the CLI discovers (walks up), MCP binds a fixed root. */
export { discoverWorkspace, projectRootOfWorkspace, refuseNul } from "../store/workspace.ts";
