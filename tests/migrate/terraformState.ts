// The Terraform state fixture (terraform-endpoints.tfstate, written from the google providers' schema and ID code:
// the six Endpoints IAM types, count, for_each, nested modules, a custom role, a principal:// member, a condition, the
// google, google-beta and OpenTofu-registry provider addresses, data sources and foreign types), and what Google holds
// once Terraform applied it: each instance's grants as the provider writes them (a Policy sets its parent's bindings,
// a Binding its role's members, a Member merges into its role's binding), for the unit and e2e tests to seed.

import * as fs from "fs";
import * as path from "path";
import type { Binding, Condition } from "../../provider/iam/policy";
import { TERRAFORM_TYPES } from "../../provider/migrate/fromTerraform";

export const TFSTATE = path.join(__dirname, "..", "..", "..", "tests", "migrate", "fixtures", "terraform-endpoints.tfstate");

type Attrs = Record<string, unknown>;
export interface TfResource {
    module?: string;
    mode: string;
    type: string;
    name: string;
    provider: string;
    instances: { index_key?: string | number; attributes: Attrs; status?: string; deposed?: string }[];
}
export interface TfState {
    version: number;
    resources: TfResource[];
    [k: string]: unknown;
}

export const loadState = (): TfState => JSON.parse(fs.readFileSync(TFSTATE, "utf8")) as TfState;

/** Terraform's condition block (a list of at most one) as IAM holds it (an empty description is none). */
function conditionOf(a: Attrs): Condition | undefined {
    const [c] = (a.condition ?? []) as { title: string; description?: string; expression: string }[];
    return c ? { title: c.title, expression: c.expression, ...(c.description ? { description: c.description } : {}) } : undefined;
}

/** An instance's parent's resource name, from its attributes. */
export function parentOf(type: string, a: Attrs): string {
    return type.includes("_consumers_") ? String(a.consumer_project) : `services/${String(a.service_name).replace(/^services\//, "")}`;
}

/** An instance's address, as Terraform prints it. */
export const addressOf = (r: TfResource, index: string | number | undefined) =>
    `${r.module ? `${r.module}.` : ""}${r.type}.${r.name}${index === undefined ? "" : `[${JSON.stringify(index)}]`}`;

/** The managed instances of the six types, with their type's facts and address. */
export function iamInstances(state: TfState) {
    return state.resources.flatMap((r) => {
        const t = TERRAFORM_TYPES.find((x) => x.terraform === r.type);
        return r.mode === "managed" && t ? r.instances.map((i) => ({ resource: r, t, attributes: i.attributes, address: addressOf(r, i.index_key) })) : [];
    });
}

/** What Google holds per parent once Terraform applied the state's resources, in the order Terraform applied them. */
export function appliedPolicies(state: TfState): Map<string, Binding[]> {
    const out = new Map<string, Binding[]>();
    for (const { resource, t, attributes: a } of iamInstances(state)) {
        const parent = parentOf(resource.type, a);
        const bindings = out.get(parent) ?? [];
        const condition = conditionOf(a);
        const same = (b: Binding) => b.role === a.role && JSON.stringify(b.condition ?? null) === JSON.stringify(condition ?? null);
        if (t.shape === "policy") {
            out.set(parent, (JSON.parse(String(a.policy_data)) as { bindings: Binding[] }).bindings);
            continue;
        }
        const members = t.shape === "member" ? [String(a.member)] : (a.members as string[]);
        const mine = bindings.find(same);
        const binding: Binding = { role: String(a.role), members: [...new Set([...(t.shape === "member" ? mine?.members ?? [] : []), ...members])].sort(), ...(condition ? { condition } : {}) };
        out.set(parent, [...bindings.filter((b) => !same(b)), binding]);
    }
    return out;
}
