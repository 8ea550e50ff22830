"""IR measures: names, trec_eval-exact kernels and the evaluate() API."""
