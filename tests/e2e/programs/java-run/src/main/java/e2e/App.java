// The Java e2e program: both lookups and one resource through the Java SDK (com.pulumi:cloud), run by the real
// engine through pulumi-language-java. Project config (set by tests/e2e/java.test.ts): service, consumer, member.
package e2e;

import com.pulumi.Context;
import com.pulumi.Pulumi;
import com.pulumi.cloud.endpoints.EndpointsFunctions;
import com.pulumi.cloud.endpoints.ServiceIamMember;
import com.pulumi.cloud.endpoints.ServiceIamMemberArgs;
import com.pulumi.cloud.endpoints.inputs.GetServiceConsumersIamPolicyArgs;
import com.pulumi.cloud.endpoints.inputs.GetServiceIamPolicyArgs;
import java.util.stream.Collectors;

public class App {
    static final String CONSUMER_ROLE = "roles/servicemanagement.serviceConsumer";

    public static void main(String[] args) {
        Pulumi.run(App::stack);
    }

    static void stack(Context ctx) {
        final var service = ctx.config().require("service");
        final var consumer = ctx.config().require("consumer");
        final var member = ctx.config().require("member");

        final var policy = EndpointsFunctions.getServiceIamPolicy(GetServiceIamPolicyArgs.builder().serviceName(service).build());
        ctx.export("serviceId", policy.applyValue(p -> p.id()));
        ctx.export("serviceEtag", policy.applyValue(p -> p.etag()));
        ctx.export("servicePolicyData", policy.applyValue(p -> p.policyData()));
        ctx.export("consumers", policy.applyValue(p -> p.bindings().stream()
            .filter(b -> b.role().equals(CONSUMER_ROLE))
            .flatMap(b -> b.members().stream())
            .sorted()
            .collect(Collectors.toList())));

        final var consumerPolicy = EndpointsFunctions.getServiceConsumersIamPolicy(GetServiceConsumersIamPolicyArgs.builder()
            .serviceName(service)
            .consumerProject(consumer)
            .build());
        ctx.export("consumerId", consumerPolicy.applyValue(p -> p.id()));

        final var grant = new ServiceIamMember("grant", ServiceIamMemberArgs.builder()
            .serviceName(service)
            .role(CONSUMER_ROLE)
            .member(member)
            .build());
        ctx.export("grantId", grant.id());
        ctx.export("grantEtag", grant.etag());
    }
}
