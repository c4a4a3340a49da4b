// Pulumi type tokens of this package, built and read in one place, in the forms Pulumi GCP's take: a resource's
// or function's `cloud:<module>/<camelName>:<Name>` (`cloud:endpoints/serviceIamMember:ServiceIamMember`), an
// object type's `cloud:<module>/<Name>:<Name>`.

import { PACKAGE_NAME } from "./version";

export interface Token {
    pkg: string;
    module: string;
    /** The member name, e.g. `ServiceIamMember`. */
    name: string;
}

/** The type of this package's provider resource (the default one and any explicit one). */
export const PROVIDER_TYPE = `pulumi:providers:${PACKAGE_NAME}`;

/** The token of `name` in `module`: `cloud:module/lowerFirst(name):name`. */
export function token(module: string, name: string): string {
    return `${PACKAGE_NAME}:${module}/${name[0].toLowerCase()}${name.slice(1)}:${name}`;
}

/** The token of an object type: its name unchanged in the middle (`cloud:endpoints/ServiceIamBindingCondition:…`), as Pulumi GCP's. */
export function typeToken(module: string, name: string): string {
    return `${PACKAGE_NAME}:${module}/${name}:${name}`;
}

/** The parts of a token in any of the forms users write (`pkg:module/x:Name`, `pkg:module:Name`, `pkg:module/Name`). */
export function parseToken(text: string): Token {
    const parts = text.split(/[:/]/);
    return { pkg: parts[0], module: parts[1] ?? "", name: parts[parts.length - 1] };
}
