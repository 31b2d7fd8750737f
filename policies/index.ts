// Entry file of the policy pack: the only place that constructs the PolicyPack (which
// starts a gRPC server for the Pulumi engine). Rules live in ./rules.
import { PolicyPack } from "@pulumi/policy";
import { rules } from "./rules";

new PolicyPack("triton-platform", { policies: rules });
