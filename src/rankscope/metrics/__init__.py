"""IR measures: names, trec_eval-exact kernels and the evaluate() API.

>>> from rankscope import evaluate
>>> results = evaluate("qrels.txt", ["bm25.run", "dense.run"], ["ndcg@10", "map", "P@10"])
>>> results.mean("bm25")                                    # doctest: +SKIP
"""

from rankscope.metrics.evaluate import DEFAULT_MEASURES, evaluate
from rankscope.metrics.names import Measure, parse_measure, parse_measures
from rankscope.metrics.results import Results

__all__ = ["DEFAULT_MEASURES", "Measure", "Results", "evaluate", "parse_measure", "parse_measures"]
