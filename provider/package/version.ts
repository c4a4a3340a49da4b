// The package's name, release and home: the plugin is `pulumi-resource-<name>`, its tokens start `<name>:`, and
// the release, license and repository are package.json's (said once, there).
import { license, repository, version } from "../../package.json";

export const PACKAGE_NAME = "cloud";
export const PACKAGE_VERSION: string = version;
export const LICENSE: string = license;

/** package.json's repository: `https://github.com/<owner>/<repo>`. */
export const REPOSITORY: string = repository.url.replace(/^git\+/, "").replace(/\.git$/, "");

/**
 * Where the engine downloads the plugin: the repository's GitHub releases, whose assets are the tarballs
 * `npm run dist` makes (`github://api.github.com/<owner>/<repo>`, the form Pulumi's own providers use; it also
 * works for a private repository, with GITHUB_TOKEN set).
 */
export const PLUGIN_DOWNLOAD_URL: string = (() => {
    const m = /^https:\/\/github\.com\/([^/]+)\/([^/]+)$/.exec(REPOSITORY);
    if (!m) throw new Error(`package.json: repository.url must be a GitHub repository (https://github.com/OWNER/REPO), not ${repository.url}`);
    return `github://api.github.com/${m[1]}/${m[2]}`;
})();
