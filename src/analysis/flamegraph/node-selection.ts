/**
 * Which nodes of a (call or differential) tree a renderer draws: a bounded, connected selection,
 * laid out left to right in the tree's weight units.
 */

/** A node kept for drawing, in pre-order; `start` is its offset from the root's left edge in weight units. */
export type SelectedNode<T> = { node: T; parent: number; depth: number; start: number };

export type NodeSelection<T> = {
  nodes: Array<SelectedNode<T>>;
  /** Nodes of the full tree (below the root) that were not kept. */
  omitted_nodes: number;
  max_depth: number;
};

/**
 * Keeps at most `maxNodes` nodes, heaviest first, and none lighter than `minWeight`. A child never
 * outweighs its parent, so best-first order always keeps a connected tree; pruned siblings stay as
 * gaps because offsets are computed over all children.
 */
export function selectNodes<T extends { children: T[] }>(
  root: T,
  weight: (node: T) => number,
  limits: { maxNodes: number; minWeight: number; totalNodes: number },
): NodeSelection<T> {
  const kept = new Set<T>([root]);
  const heap: T[] = [];
  const push = (node: T): void => {
    heap.push(node);
    let index = heap.length - 1;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      if (weight(heap[parentIndex] as T) >= weight(node)) break;
      heap[index] = heap[parentIndex] as T;
      index = parentIndex;
    }
    heap[index] = node;
  };
  const pop = (): T => {
    const top = heap[0] as T;
    const last = heap.pop() as T;
    if (heap.length > 0) {
      let index = 0;
      for (;;) {
        const leftIndex = index * 2 + 1;
        if (leftIndex >= heap.length) break;
        const rightIndex = leftIndex + 1;
        const larger = rightIndex < heap.length && weight(heap[rightIndex] as T) > weight(heap[leftIndex] as T) ? rightIndex : leftIndex;
        if (weight(heap[larger] as T) <= weight(last)) break;
        heap[index] = heap[larger] as T;
        index = larger;
      }
      heap[index] = last;
    }
    return top;
  };
  for (const child of root.children) if (weight(child) > 0 && weight(child) >= limits.minWeight) push(child);
  while (heap.length > 0 && kept.size - 1 < limits.maxNodes) {
    const node = pop();
    kept.add(node);
    for (const child of node.children) if (weight(child) > 0 && weight(child) >= limits.minWeight) push(child);
  }
  const nodes: Array<SelectedNode<T>> = [];
  let maxDepth = 0;
  const work: Array<{ node: T; parent: number; depth: number; start: number }> = [{ node: root, parent: -1, depth: 0, start: 0 }];
  while (work.length > 0) {
    const item = work.pop() as SelectedNode<T>;
    const index = nodes.length;
    nodes.push(item);
    if (item.depth > maxDepth) maxDepth = item.depth;
    let offset = item.start;
    const keptChildren: Array<SelectedNode<T>> = [];
    for (const child of item.node.children) {
      if (kept.has(child)) keptChildren.push({ node: child, parent: index, depth: item.depth + 1, start: offset });
      offset += weight(child);
    }
    for (let position = keptChildren.length - 1; position >= 0; position -= 1) work.push(keptChildren[position] as SelectedNode<T>);
  }
  return { nodes, omitted_nodes: Math.max(0, limits.totalNodes - (nodes.length - 1)), max_depth: maxDepth };
}
