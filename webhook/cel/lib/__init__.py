"""The runtime function libraries and their registry (`functions.FUNCTIONS`): the standard library, the
cel-go extensions, Kubernetes' libraries, time, IP/CIDR, URLs, regular expressions and named formats. Each
library module registers its functions when imported. Stands on `webhook.cel.common` only."""
