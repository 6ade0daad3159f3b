import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnimalStoreClient } from '../../../examples/client/src/example.js';
import { sell } from '../../../examples/client/src/till.js';
import { CLIENT_COMMAND } from '../../support/example-commands.js';
import { createPet } from '../../support/pets-api.js';
import { storedPetState, WITHOUT_SWEEP } from '../../support/orders-api.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { ENGINES } from '../../support/test-database.js';

describe.each(ENGINES)("the typed client's till [%s]", (engine) => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_MINUTE: '0' }, WITHOUT_SWEEP);
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `${await t.app.getUrl()}/v1`;
  });
  afterAll(() => t?.close());

  it('sells an animal: places the order, completes it; the pet is sold', async () => {
    const pet = await createPet(t, { name: 'Rex', categoryId: 1, status: 'available' });
    const sale = await sell(createAnimalStoreClient(baseUrl, t.key), pet.id);
    expect(sale).toEqual({
      sold: expect.objectContaining({ petId: pet.id, status: 'completed' }) as unknown,
    });
    expect(await storedPetState(t, pet.id)).toMatchObject({ status: 'sold' });
  });

  it('of two tills selling one animal at once, one sells it and the other is told it is not available', async () => {
    const pet = await createPet(t, { name: 'Max', categoryId: 1, status: 'available' });
    const client = createAnimalStoreClient(baseUrl, t.key);
    const sales = await Promise.all([sell(client, pet.id), sell(client, pet.id)]);
    const notSold = sales.find((sale) => 'notAvailable' in sale);
    expect(sales.filter((sale) => 'sold' in sale)).toHaveLength(1);
    expect(notSold).toEqual({
      notAvailable: expect.stringMatching(
        new RegExp(
          `^Pet ${pet.id} is (pending, held by an open order|sold): only an available pet can be ordered$`,
        ),
      ) as unknown,
    });
  });

  it('runs as `till <petId>`', async () => {
    const pet = await createPet(t, { name: 'Bella', categoryId: 1, status: 'available' });
    const env = { ...process.env, ANIMAL_STORE_URL: baseUrl, ANIMAL_STORE_API_KEY: t.key };
    const run = (petId: number) =>
      new Promise<{ code: number; stdout: string }>((done) =>
        execFile('node', [...CLIENT_COMMAND, 'till', String(petId)], { env }, (error, stdout) =>
          done({ code: error ? (error.code as number) : 0, stdout }),
        ),
      );
    const sold = await run(pet.id);
    expect(sold.code).toBe(0);
    expect(sold.stdout).toMatch(
      new RegExp(`^sold pet ${pet.id}: order \\d+ completed at \\d{4}-\\d\\d-\\d\\dT\\S+Z\\n$`),
    );
    expect(await run(pet.id)).toEqual({
      code: 0,
      stdout: `not sold: Pet ${pet.id} is sold: only an available pet can be ordered\n`,
    });
  });
});
