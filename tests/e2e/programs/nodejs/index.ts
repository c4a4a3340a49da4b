// The e2e TypeScript program, written against the generated SDK (sdk/nodejs) as a user would, imported as
// `pulumi-cloud-endpoints` (its npm name). tests/e2e/nodejs.test.ts compiles it with tsconfig.json beside it, against the compiled SDK
// (so it is type-checked against the SDK's real declarations), and runs it as an Automation API inline program
// with the real engine. (The repository's own tsc leaves tests/e2e/programs alone.)

import * as pulumi from "@pulumi/pulumi";
import * as cloud from "pulumi-cloud-endpoints";

export interface ProgramOptions {
    service: string;
    consumer: string;
    /** A member the program grants roles/servicemanagement.serviceConsumer on the service. */
    member: string;
    /** Configuration of the explicit provider: another endpoint, another (secret) token. */
    explicitEndpoint: string;
    explicitToken: string;
}

const CONSUMER_ROLE = "roles/servicemanagement.serviceConsumer";
type Binding = cloud.types.output.organizations.GetIAMPolicyBinding;

export function program(o: ProgramOptions): () => Promise<Record<string, unknown>> {
    return async () => {
        // Direct form: a Promise, through the default provider (configured by stack config).
        const direct = await cloud.endpoints.getServiceConsumersIamPolicy({
            serviceName: o.service,
            consumerProject: o.consumer,
        });

        // A grant, then the output form reading the service's policy after it. The lookup's input comes from
        // the grant's etag, unknown until the grant exists, so in the first preview the lookup cannot run and
        // its result is unknown; in `up` it runs after the grant (dependsOn).
        const grant = new cloud.endpoints.ServiceIamMember("ts-consumer", {
            serviceName: o.service,
            role: CONSUMER_ROLE,
            member: o.member,
        });
        const after = cloud.endpoints.getServiceIamPolicyOutput(
            { serviceName: pulumi.all([grant.etag, grant.serviceName]).apply(([, service]) => service) },
            { dependsOn: [grant] },
        );

        // An explicit provider resource with its own configuration.
        const explicit = new cloud.Provider("explicit", {
            serviceManagementCustomEndpoint: o.explicitEndpoint,
            accessToken: pulumi.secret(o.explicitToken),
        });
        const viaExplicit = cloud.endpoints.getServiceIamPolicyOutput({ serviceName: o.service }, { provider: explicit });

        return {
            directId: direct.id,
            directBindings: direct.bindings,
            consumers: after.bindings.apply((bs: Binding[]) =>
                bs.filter((b: Binding) => b.role === CONSUMER_ROLE).flatMap((b: Binding) => b.members)),
            afterEtag: after.etag,
            grantId: grant.id,
            explicitPolicyData: viaExplicit.policyData,
        };
    };
}
