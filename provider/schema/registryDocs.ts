// The Pulumi Registry's pages for the package (docs/_index.md, docs/installation-configuration.md), rendered from
// the declarations schema.json comes from: the package's description (schema.ts), one example program in every
// language (declare/examples.ts, from the resources' and functions' own examples), the config keys with their
// environment fallbacks, secrecy and defaults (protocol/config.ts). `npm run schema` writes them beside schema.json; a test
// fails when the committed pages drift.

import { configProperties } from "../protocol/config";
import { Property } from "../declare/define";
import { LANGUAGES, Language, packageImport, renderExample, Statement } from "../declare/examples";
import { functions } from "../functions";
import { resources } from "../resources";
import { buildSchema, naming, NPM_PACKAGE_NAME } from "./schema";
import { token } from "../package/tokens";
import { PACKAGE_NAME, PACKAGE_VERSION, PLUGIN_DOWNLOAD_URL } from "../package/version";
import { JOURNAL_URL_ENV } from "../deployment/location";

/** The pages, by their path under docs/. */
export const REGISTRY_DOCS = ["_index.md", "installation-configuration.md"] as const;
export type RegistryDoc = (typeof REGISTRY_DOCS)[number];

/** The name each language's SDK is installed by. */
function install(language: Language): string {
    const n = naming();
    switch (language) {
        case "typescript": return `npm install ${NPM_PACKAGE_NAME}`;
        case "python": return `pip install pulumi_${PACKAGE_NAME}`;
        case "go": return `go get ${n.goBase.replace(/\/[^/]+$/, "")}`;
        case "csharp": return `dotnet add package Pulumi.${PACKAGE_NAME[0].toUpperCase()}${PACKAGE_NAME.slice(1)}`;
        case "java": return `com.pulumi:${PACKAGE_NAME}:${PACKAGE_VERSION} (Maven or Gradle)`;
        case "yaml": return "nothing: the engine installs the plugin";
    }
}

const front = (title: string, desc: string) => ["---", `title: ${title}`, `meta_desc: ${desc}`, "layout: package", "---", ""];

/** A chooser with one code block per language, as the registry's pages show them. */
function chooser(code: (l: Language) => string): string[] {
    return [
        `{{< chooser language "${LANGUAGES.join(",")}" >}}`,
        ...LANGUAGES.flatMap((l) => [`{{% choosable language ${l} %}}`, "", "```" + l, code(l), "```", "", "{{% /choosable %}}"]),
        "{{< /chooser >}}",
    ];
}

/** The overview's program: the service lookup's example, then the service Member's (their own examples, joined). */
function overviewProgram(): Statement[] {
    const lookup = functions.find((f) => f.token === token("endpoints", "getServiceIamPolicy"));
    const member = resources.find((r) => r.token === token("endpoints", "ServiceIamMember"));
    if (!lookup || !member) throw new Error("registryDocs: the service lookup or the service Member is not defined");
    // Lookups first (Go declares `err` with the first one), then the resource, then the exports.
    const all = [...lookup.examples[0].program, ...member.examples[0].program];
    return [...all.filter((s) => s.kind === "invoke"), ...all.filter((s) => s.kind === "resource"), ...all.filter((s) => s.kind === "export")];
}

function indexPage(): string {
    const schema = buildSchema();
    return [
        ...front(String(schema.displayName), String(schema.description)),
        `The \`${PACKAGE_NAME}\` package, release ${PACKAGE_VERSION}: ${String(schema.description)} It has the names and ` +
            "shapes of Pulumi GCP's `gcp.endpoints` IAM resources and lookups and of `gcp.organizations.getIAMPolicy`, with " +
            `\`${PACKAGE_NAME}\` in place of \`gcp\`.`,
        "",
        "A stack that already holds Pulumi GCP's Endpoints IAM resources must not simply switch packages: the engine would " +
            "create the new resources, then delete the old ones through Pulumi GCP, removing the grants the new ones declare. " +
            `The plugin's \`migrate-from-gcp\` command moves such a stack's state instead (\`pulumi plugin run --kind resource ${PACKAGE_NAME}@${PACKAGE_VERSION} -- migrate-from-gcp --help\`).`,
        "",
        "Terraform's `google_endpoints_service_iam_*` and `google_endpoints_service_consumers_iam_*` resources move with the " +
            `plugin's \`migrate-from-terraform\` command, which turns a Terraform state into the input of \`pulumi import --file\` ` +
            `(\`pulumi plugin run --kind resource ${PACKAGE_NAME}@${PACKAGE_VERSION} -- migrate-from-terraform --help\`).`,
        "",
        "## Example",
        "",
        ...chooser((l) => renderExample(overviewProgram(), l, naming())),
        "",
    ].join("\n");
}

/** A config key's row: its name, environment fallback, and what it is (secret, default). */
function configRow(key: string, p: Property): string {
    const env = (p.env ?? []).map((e) => `\`${e}\``).join(", ");
    const notes = [
        p.description ?? "",
        p.secret ? `Secret: \`pulumi config set --secret ${PACKAGE_NAME}:${key}\`.` : "",
        p.default !== undefined && !/Default/.test(p.description ?? "") && !(typeof p.default === "object" && p.default !== null && !Array.isArray(p.default))
            ? `Default: \`${JSON.stringify(p.default)}\`.` : "",
    ].filter((s) => s !== "").join(" ").replace(/\|/g, "\\|");
    return `| \`${key}\` | ${env} | ${notes} |`;
}

function installationPage(): string {
    const schema = buildSchema();
    const n = naming();
    const env = (key: keyof typeof configProperties) => (configProperties[key].env ?? []).map((e) => `\`${e}\``).join(", ");
    return [
        ...front(`${String(schema.displayName)} Installation & Configuration`,
            `How to install the ${PACKAGE_NAME} package and configure its credentials and settings.`),
        "## Installation",
        "",
        `The provider plugin (\`pulumi-resource-${PACKAGE_NAME}\`) is downloaded by the engine on a program's first ` +
            `\`pulumi preview\` or \`pulumi up\` (every SDK carries \`${PLUGIN_DOWNLOAD_URL}\`). By hand:`,
        "",
        "```sh",
        `pulumi plugin install resource ${PACKAGE_NAME} ${PACKAGE_VERSION} --server ${PLUGIN_DOWNLOAD_URL}`,
        "```",
        "",
        "| language | install | use |",
        "|---|---|---|",
        ...LANGUAGES.map((l) => `| ${l} | ${install(l)} | \`${packageImport(l, n, "endpoints")}\` |`),
        "",
        "## Configuration",
        "",
        `Set each key with \`pulumi config set ${PACKAGE_NAME}:<key> <value>\` (the default provider), or as a property of ` +
            `an explicit \`pulumi:providers:${PACKAGE_NAME}\` resource. A key left unset falls back to its environment ` +
            "variables, in the order listed, then to its default.",
        "",
        "| key | environment | description |",
        "|---|---|---|",
        ...Object.entries(configProperties).map(([k, p]) => configRow(k, p)),
        "",
        "## Credentials",
        "",
        `1. \`accessToken\` (${env("accessToken")}): a temporary OAuth 2.0 access token, used as it is.`,
        `2. \`credentials\` (${env("credentials")}): a service account key, or another credentials file, as JSON or its path.`,
        "3. Otherwise Application Default Credentials: `GOOGLE_APPLICATION_CREDENTIALS`, then gcloud's file " +
            "(`gcloud auth application-default login`), then the metadata server.",
        "",
        `With any of them, \`impersonateServiceAccount\` (${env("impersonateServiceAccount")}) makes every call as that ` +
            "service account, through the IAM Credentials API. The credentials need `servicemanagement.services.getIamPolicy` " +
            "and, to manage policies, `servicemanagement.services.setIamPolicy` on the services (and consumer projects) named.",
        "",
        ...crashRecovery(),
    ].join("\n");
}

/** What a user does after a crash: the crash journal's warnings (journal/journal.ts) and the commands they name. */
function crashRecovery(): string[] {
    return [
        "## After a crash",
        "",
        "The provider notes every grant before it writes it, in its crash journal: beside the stack's state for a `gs://` " +
            `or \`file://\` backend (under \`.pulumi/plugins-state/pulumi-resource-${PACKAGE_NAME}/\`), where \`${JOURNAL_URL_ENV}\` ` +
            "names a `gs://bucket[/prefix]` or `file://` folder for any other backend, else under `$PULUMI_HOME/plugins-state` " +
            "(default `~/.pulumi`). If the plugin or the `pulumi` CLI stops between a write and Pulumi " +
            "recording it (Ctrl-C twice, `kill -9`, a cancelled CI job), the next runs warn `what earlier runs of this stack " +
            "left unrecorded, still so in IAM (the provider's crash journal)`: one line per grant, with the resource it was " +
            "written for and the command that resolves it, on every run until it is settled. The provider never removes " +
            "such a grant by itself.",
        "",
        "1. Recover the stack as Pulumi says: `pulumi cancel` if it says an update is still in progress, " +
            "`pulumi refresh --clear-pending-creates` if it warns of pending creates.",
        "2. `pulumi up`. A grant written for a resource the program declares is recorded; a grant removed by an operation " +
            "Pulumi did not record is put back where the program declares its resource (that resource is deleted where it does not).",
        "3. Where `pulumi up` warns of a pending create of the resource a line names, run the line's " +
            "`pulumi refresh --import-pending-creates '<URN>' '<ID>'`: it records the grant. For a grant the program does not " +
            "declare, run the line's `pulumi import --protect=false …`: the next `pulumi up` then removes the grant unless you " +
            "add it to the program.",
        "",
        "If the provider warns that it cannot keep its crash journal in a folder, fix that folder (yours, mode 0700, not a " +
            "link, writable) or set `PULUMI_HOME` to one that is. Where the journal is in `PULUMI_HOME` (a Pulumi Cloud, " +
            `\`s3://\`, \`azblob://\` or \`postgres://\` backend without \`${JOURNAL_URL_ENV}\`), a run on another machine (a CI ` +
            "runner that does not keep it) does not see an earlier crash. If it warns that it cannot keep it in a bucket " +
            "(missing, refused, unavailable), it keeps it locally for that run, saying so.",
        "",
    ];
}

/** A page's text exactly as committed. */
export function registryDoc(page: RegistryDoc): string {
    return page === "_index.md" ? indexPage() : installationPage();
}
