// The package's name and release: the plugin is `pulumi-resource-<name>`, its tokens start `<name>:`,
// and the release is package.json's version (said once, there).
import { version } from "../package.json";

export const PACKAGE_NAME = "cloud";
export const PACKAGE_VERSION: string = version;
