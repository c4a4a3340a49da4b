package e2e;

import com.pulumi.cloud.endpoints.EndpointsFunctions;
import com.pulumi.cloud.endpoints.inputs.GetServiceConsumersIamPolicyArgs;
import com.pulumi.cloud.endpoints.inputs.GetServiceConsumersIamPolicyPlainArgs;
import com.pulumi.cloud.endpoints.inputs.GetServiceIamPolicyArgs;
import com.pulumi.cloud.endpoints.inputs.GetServiceIamPolicyPlainArgs;
import com.pulumi.cloud.endpoints.outputs.GetServiceConsumersIamPolicyResult;
import com.pulumi.cloud.endpoints.outputs.GetServiceIamPolicyResult;
import com.pulumi.cloud.organizations.outputs.GetIAMPolicyBinding;
import com.pulumi.core.Output;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Compiles only if the generated Java SDK has the names and types its users are promised. */
final class Names {
    private Names() {}

    /** The output form: {@code getServiceIamPolicy} returns an {@code Output}. */
    static Output<List<GetIAMPolicyBinding>> bindings(String service) {
        Output<GetServiceIamPolicyResult> r = EndpointsFunctions.getServiceIamPolicy(
            GetServiceIamPolicyArgs.builder().serviceName(service).build());
        return r.applyValue(GetServiceIamPolicyResult::bindings);
    }

    /** The plain form: {@code getServiceIamPolicyPlain} returns a {@code CompletableFuture}. */
    static CompletableFuture<String> policyData(String service) {
        CompletableFuture<GetServiceIamPolicyResult> r = EndpointsFunctions.getServiceIamPolicyPlain(
            GetServiceIamPolicyPlainArgs.builder().serviceName(service).build());
        return r.thenApply(GetServiceIamPolicyResult::policyData);
    }

    static Output<String> consumerEtag(String service, String consumer) {
        Output<GetServiceConsumersIamPolicyResult> r = EndpointsFunctions.getServiceConsumersIamPolicy(
            GetServiceConsumersIamPolicyArgs.builder().serviceName(service).consumerProject(consumer).build());
        return r.applyValue(GetServiceConsumersIamPolicyResult::etag);
    }

    static CompletableFuture<String> consumerId(String service, String consumer) {
        return EndpointsFunctions.getServiceConsumersIamPolicyPlain(
            GetServiceConsumersIamPolicyPlainArgs.builder().serviceName(service).consumerProject(consumer).build())
            .thenApply(GetServiceConsumersIamPolicyResult::id);
    }
}
