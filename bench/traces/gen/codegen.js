// SPDX-License-Identifier: GPL-2.0-only OR MIT
// Generates and runs JavaScript code: many small functions compiled with
// new Function(), so V8 keeps allocating, protecting and freeing code pages.
'use strict';
let total = 0;
for (let round = 0; round < 40; round++) {
	const fns = [];
	for (let i = 0; i < 400; i++) {
		const body = [];
		for (let k = 0; k < 20; k++)
			body.push(`s = (s * ${k + 3} + ${i} + x) % 1000003;`);
		fns.push(new Function('x', `let s = ${round}; ${body.join(' ')} return s;`));
	}
	for (let rep = 0; rep < 200; rep++)
		for (const f of fns)
			total = (total + f(rep)) % 1000000007;
	const junk = [];
	for (let j = 0; j < 2000; j++)
		junk.push(new Array(64).fill(j));
}
console.log('codegen total', total);
